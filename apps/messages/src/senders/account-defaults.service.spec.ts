import {
  type AccountSendingRecord,
  AccountsSubjects,
  type AccountStatusChangedEvent,
} from '@envoi/contracts-accounts';
import { encodePacket, type RpcClient } from '@envoi/shared-nats';
import type { Msg, NatsConnection, SubscriptionOptions } from 'nats';

import type { MessagesConfig } from '../messages.config';
import { AccountDefaultsService } from './account-defaults.service';

const ACCOUNT = '3f0b7f7e-8a43-4c3e-9d2a-1b2c3d4e5f60';
const OTHER = '3f0b7f7e-8a43-4c3e-9d2a-1b2c3d4e5f61';

/** The connection's one subscription (the status broadcast), delivered to by `broadcast`. */
function fakeConnection() {
  const unsubscribe = jest.fn();
  const subscribe = jest.fn((_subject: string, _options: SubscriptionOptions) => ({
    unsubscribe,
  }));
  const broadcast = (data: AccountStatusChangedEvent) => {
    const [subject, options] = subscribe.mock.calls[0] ?? [];
    options?.callback?.(null, { data: encodePacket({ pattern: subject, data }) } as unknown as Msg);
  };
  const connection = { subscribe } as unknown as NatsConnection;
  return { connection, broadcast, subscribe, unsubscribe };
}

function settings(accountId: string, status: AccountSendingRecord['status']): AccountSendingRecord {
  return {
    account_id: accountId,
    status,
    track_opens: true,
    track_clicks: false,
    message_metadata_retention: 30,
    message_data_retention: 3,
    monthly_credit: 0,
  };
}

describe('AccountDefaultsService', () => {
  let bus: ReturnType<typeof fakeConnection>;
  let statuses: Map<string, AccountSendingRecord['status']>;
  let request: jest.Mock;
  let service: AccountDefaultsService;

  beforeEach(() => {
    bus = fakeConnection();
    statuses = new Map([
      [ACCOUNT, 'active'],
      [OTHER, 'active'],
    ]);
    request = jest.fn((_subject: unknown, payload: { account_id: string }) =>
      Promise.resolve(settings(payload.account_id, statuses.get(payload.account_id) ?? 'active')),
    );
    service = new AccountDefaultsService(
      { request } as unknown as RpcClient,
      { ACCOUNT_CACHE_TTL_MS: 60_000 } as MessagesConfig,
      bus.connection,
    );
    service.onModuleInit();
  });

  afterEach(() => service.onModuleDestroy());

  it('answers the account’s settings and status, asking once within the TTL', async () => {
    await expect(service.get(ACCOUNT)).resolves.toEqual({
      status: 'active',
      monthlyCredit: 0,
      trackOpens: true,
      trackClicks: false,
      metadataDays: 30,
      dataDays: 3,
    });
    await service.get(ACCOUNT);
    expect(request).toHaveBeenCalledTimes(1);
    expect(request).toHaveBeenCalledWith(AccountsSubjects.getSendingSettings, {
      account_id: ACCOUNT,
    });
  });

  it('drops the accounts a status change names, at once', async () => {
    await service.get(ACCOUNT);
    await service.get(OTHER);
    statuses.set(ACCOUNT, 'suspended');
    statuses.set(OTHER, 'suspended');

    bus.broadcast({ account_ids: [ACCOUNT] });

    await expect(service.get(ACCOUNT)).resolves.toMatchObject({ status: 'suspended' });
    await expect(service.get(OTHER)).resolves.toMatchObject({ status: 'active' });
  });

  it('does not keep an answer that was in flight when the change was broadcast', async () => {
    const pending = service.get(ACCOUNT);
    bus.broadcast({ account_ids: [ACCOUNT] });
    statuses.set(ACCOUNT, 'suspended');
    await pending;

    await expect(service.get(ACCOUNT)).resolves.toMatchObject({ status: 'suspended' });
  });

  it('listens to the status broadcast until the module is destroyed', () => {
    expect(bus.subscribe).toHaveBeenCalledWith(
      AccountsSubjects.accountStatusChanged.name,
      expect.objectContaining({ callback: expect.any(Function) as unknown }),
    );
    service.onModuleDestroy();
    expect(bus.unsubscribe).toHaveBeenCalledTimes(1);
  });
});
