import { pollUntil } from '@envoi/shared-testing';

import {
  type AccountSession,
  closeSessions,
  createAccountSession,
  createKey,
} from '../support/account-session';
import type { KeyClient } from '../support/api-client';
import { type GatewayReplica, startGatewayReplica } from '../support/gateway-replica';

/**
 * A second gateway replica whose verification cache would trust a key for a minute: only the
 * accounts service's broadcast can make it forget a changed or deleted key within seconds.
 */
describe('API key changes across gateway replicas', () => {
  let replica: GatewayReplica;
  let session: AccountSession;

  beforeAll(async () => {
    replica = await startGatewayReplica('gateway-2', { API_KEY_CACHE_TTL_MS: '60000' });
    session = await createAccountSession();
  });

  afterAll(async () => {
    await replica?.stop();
    await closeSessions();
  });

  function onReplica(client: KeyClient, pathname: string) {
    return client.get(pathname, replica.target);
  }

  it('stops accepting a deleted key on every replica within seconds', async () => {
    const key = await createKey(session, ['accounts:read']);
    expect((await key.client.get('/v2/ping')).status).toBe(200);
    expect((await onReplica(key.client, '/v2/ping')).status).toBe(200); // now cached on the replica

    expect((await session.api.delete(session.path(`/api-keys/${key.id}`))).status).toBe(200);

    await pollUntil(
      () => onReplica(key.client, '/v2/ping'),
      (response) => response.status === 401,
      { timeoutMs: 5_000, what: 'the replica to reject the deleted key' },
    );
  });

  it('applies a scope change on every replica within seconds', async () => {
    const key = await createKey(session, ['accounts:read', 'api-keys:read']);
    expect((await onReplica(key.client, session.path())).status).toBe(200);

    const updated = await session.api.put(session.path(`/api-keys/${key.id}`), {
      scopes: ['api-keys:read'],
    });
    expect(updated.status).toBe(200);

    await pollUntil(
      () => onReplica(key.client, session.path()),
      (response) => response.status === 403,
      { timeoutMs: 5_000, what: 'the replica to apply the narrowed scopes' },
    );
  });
});
