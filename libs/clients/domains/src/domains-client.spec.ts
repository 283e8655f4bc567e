import {
  DomainsErrorCode,
  DomainsSubjects,
  type SenderAuthorization,
} from '@envoi/contracts-domains';
import { encodePacket, type RpcClient, RpcError } from '@envoi/shared-nats';
import type { Msg, NatsConnection, Subscription, SubscriptionOptions } from 'nats';

import { DomainsClient } from './domains-client';

const ACCOUNT = '3f0b7f7e-8a43-4c3e-9d2a-1b2c3d4e5f60';

type Callback = NonNullable<SubscriptionOptions['callback']>;

/** A NATS connection that only records subscriptions, so a test can deliver broadcasts. */
function fakeConnection() {
  const callbacks = new Map<string, Callback>();
  const connection = {
    subscribe: (subject: string, options: SubscriptionOptions) => {
      if (options.callback) callbacks.set(subject, options.callback);
      return { unsubscribe: () => callbacks.delete(subject) } as unknown as Subscription;
    },
  } as unknown as NatsConnection;
  const broadcast = (subject: string, data: object) => {
    const callback = callbacks.get(subject);
    if (!callback) throw new Error(`nobody listens to ${subject}`);
    callback(null, { data: encodePacket({ pattern: subject, data }) } as unknown as Msg);
  };
  return { connection, broadcast, subjects: () => [...callbacks.keys()] };
}

function authorization(domain: string, version: number): SenderAuthorization {
  return {
    domain_id: 'd0b7f7e0-8a43-4c3e-9d2a-1b2c3d4e5f60',
    account_id: ACCOUNT,
    domain,
    dns_valid: true,
    dkim: { selector: 'envoi', algorithm: 'rsa-sha256' },
    return_path_host: null,
    tracking_host: null,
    version,
    cache_ttl_ms: 60_000,
  };
}

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((ok) => {
    resolve = ok;
  });
  return { promise, resolve };
}

describe('DomainsClient', () => {
  let bus: ReturnType<typeof fakeConnection>;
  let request: jest.Mock;
  let client: DomainsClient;

  beforeEach(() => {
    bus = fakeConnection();
    request = jest.fn();
    client = new DomainsClient({ request } as unknown as RpcClient, bus.connection, {
      senderCacheMaxTtlMs: 60_000,
    });
    client.onModuleInit();
  });

  afterEach(() => {
    client.onModuleDestroy();
  });

  it('asks the domains service once for a sender authorization, then answers from its cache', async () => {
    request.mockResolvedValue(authorization('example.com', 1));

    await client.senderAuthorization(ACCOUNT, 'Example.com');
    await expect(client.senderAuthorization(ACCOUNT, 'example.com.')).resolves.toMatchObject({
      version: 1,
    });

    expect(request).toHaveBeenCalledTimes(1);
    expect(request).toHaveBeenCalledWith(DomainsSubjects.authorizeSender, {
      account_id: ACCOUNT,
      domain: 'example.com',
    });
  });

  it.each([
    ['changed', DomainsSubjects.domainChanged.name],
    ['deleted', DomainsSubjects.domainDeleted.name],
  ])('drops every cache of a domain as soon as it is %s', async (_, subject) => {
    request
      .mockResolvedValueOnce(authorization('example.com', 1))
      .mockResolvedValueOnce(authorization('example.com', 2));
    const own = client.createCache<{ key: number }>(() => 60_000);
    let keys = 0;
    const loadKey = () => Promise.resolve({ key: ++keys });
    await client.senderAuthorization(ACCOUNT, 'example.com');
    await own.get(ACCOUNT, 'example.com', loadKey);

    bus.broadcast(subject, { account_id: ACCOUNT, domain: 'example.com' });

    await expect(client.senderAuthorization(ACCOUNT, 'example.com')).resolves.toMatchObject({
      version: 2,
    });
    await expect(own.get(ACCOUNT, 'example.com', loadKey)).resolves.toEqual({ key: 2 });
  });

  it('does not keep an answer that was in flight when the change was broadcast', async () => {
    const beforeChange = deferred<SenderAuthorization>();
    request
      .mockReturnValueOnce(beforeChange.promise)
      .mockResolvedValueOnce(authorization('example.com', 2));
    const inFlight = client.senderAuthorization(ACCOUNT, 'example.com');

    bus.broadcast(DomainsSubjects.domainChanged.name, {
      account_id: ACCOUNT,
      domain: 'example.com',
      version: 2,
    });
    beforeChange.resolve(authorization('example.com', 1));

    await expect(inFlight).resolves.toMatchObject({ version: 1 });
    await expect(client.senderAuthorization(ACCOUNT, 'example.com')).resolves.toMatchObject({
      version: 2,
    });
    expect(request).toHaveBeenCalledTimes(2);
  });

  it('keeps no failure, so a domain created later is found', async () => {
    request
      .mockRejectedValueOnce(new RpcError(DomainsErrorCode.DomainNotFound, 'domain not found'))
      .mockResolvedValueOnce(authorization('example.com', 1));

    await expect(client.senderAuthorization(ACCOUNT, 'example.com')).rejects.toMatchObject({
      code: DomainsErrorCode.DomainNotFound,
    });
    await expect(client.senderAuthorization(ACCOUNT, 'example.com')).resolves.toMatchObject({
      version: 1,
    });
  });

  it('stops listening on shutdown', () => {
    expect(bus.subjects().sort()).toEqual(
      [DomainsSubjects.domainChanged.name, DomainsSubjects.domainDeleted.name].sort(),
    );
    client.onModuleDestroy();
    expect(bus.subjects()).toEqual([]);
  });
});
