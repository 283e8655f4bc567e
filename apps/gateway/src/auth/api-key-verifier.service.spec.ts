import {
  AccountsErrorCode,
  AccountsSubjects,
  type VerifiedApiKey,
} from '@envoi/contracts-accounts';
import { encodePacket, type RpcClient, RpcError } from '@envoi/shared-nats';
import type { Logger } from '@envoi/shared-observability';
import type { Msg, NatsConnection, Subscription, SubscriptionOptions } from 'nats';

import type { GatewayConfig } from '../gateway.config';
import { ApiKeyVerifier } from './api-key-verifier.service';

const KEY_ID = 'c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f';
const SECRET = `envoi-sk-${'a1B2'.repeat(16)}`;

function verified(scopes: string[]): VerifiedApiKey {
  return {
    key_id: KEY_ID,
    account_id: '3f0b7f7e-8a43-4c3e-9d2a-1b2c3d4e5f60',
    parent_account_id: null,
    scopes,
    ip_allow_list: [],
  };
}

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((ok) => {
    resolve = ok;
  });
  return { promise, resolve };
}

function setup() {
  let keyChanged: SubscriptionOptions['callback'];
  const connection = {
    subscribe: (subject: string, options: SubscriptionOptions) => {
      if (subject === AccountsSubjects.apiKeyChanged.name) keyChanged = options.callback;
      return { unsubscribe: () => undefined } as unknown as Subscription;
    },
  } as unknown as NatsConnection;
  const request = jest.fn();
  const verifier = new ApiKeyVerifier(
    { request } as unknown as RpcClient,
    { API_KEY_CACHE_TTL_MS: 60_000 } as GatewayConfig,
    connection,
    { warn: jest.fn() } as unknown as Logger,
  );
  verifier.onModuleInit();
  const broadcastKeyChanged = () => {
    const packet = { pattern: AccountsSubjects.apiKeyChanged.name, data: { key_id: KEY_ID } };
    keyChanged?.(null, { data: encodePacket(packet) } as unknown as Msg);
  };
  return { verifier, request, broadcastKeyChanged };
}

describe('ApiKeyVerifier', () => {
  it('asks the accounts service once, then answers from its cache', async () => {
    const { verifier, request } = setup();
    request.mockResolvedValue(verified(['accounts:read']));

    await verifier.verify(SECRET, 'req-1');
    const principal = await verifier.verify(SECRET, 'req-2');

    expect(principal?.scopeSet).toEqual(new Set(['accounts:read']));
    expect(request).toHaveBeenCalledTimes(1);
  });

  it('asks again once the key changed', async () => {
    const { verifier, request, broadcastKeyChanged } = setup();
    request
      .mockResolvedValueOnce(verified(['accounts:read']))
      .mockRejectedValueOnce(new RpcError(AccountsErrorCode.InvalidApiKey, 'invalid api key'));
    await verifier.verify(SECRET, 'req-1');

    broadcastKeyChanged();

    await expect(verifier.verify(SECRET, 'req-2')).resolves.toBeNull();
  });

  it('never keeps an answer that was in flight when the key changed', async () => {
    const { verifier, request, broadcastKeyChanged } = setup();
    const beforeRevocation = deferred<VerifiedApiKey>();
    request
      .mockReturnValueOnce(beforeRevocation.promise)
      .mockRejectedValueOnce(new RpcError(AccountsErrorCode.InvalidApiKey, 'invalid api key'));
    const inFlight = verifier.verify(SECRET, 'req-1');

    broadcastKeyChanged();
    beforeRevocation.resolve(verified(['accounts:read']));

    await expect(inFlight).resolves.toMatchObject({ key_id: KEY_ID });
    await expect(verifier.verify(SECRET, 'req-2')).resolves.toBeNull();
    expect(request).toHaveBeenCalledTimes(2);
  });
});
