import { CommonErrorCode } from '@envoi/contracts-core';
import { WebhooksSubjects } from '@envoi/contracts-webhooks';
import { connectNats, RpcClient } from '@envoi/shared-nats';
import { findFreePort, IsolatedPlatform, pollUntil } from '@envoi/shared-testing';
import type { NatsConnection } from 'nats';

/**
 * The webhooks service as it runs in production: migrated, then started from dist/ on a private
 * database and bus, reached over NATS and on its health port. WEBHOOKS_INT_KEEP_LOGS keeps its log.
 */
describe('webhooks service', () => {
  let platform: IsolatedPlatform | undefined;
  let connection: NatsConnection | undefined;
  let healthUrl = '';

  beforeAll(async () => {
    await IsolatedPlatform.build();
    platform = await IsolatedPlatform.start({ owner: 'webhooks' });
    const healthPort = await findFreePort();
    await platform.startService('webhooks', platform.env({ HEALTH_PORT: String(healthPort) }));
    healthUrl = `http://127.0.0.1:${healthPort}`;
    connection = await connectNats({ servers: [platform.natsUrl], name: 'webhooks-test-client' });
  }, 120_000);

  afterAll(async () => {
    await connection?.drain();
    await platform?.stop();
  });

  const rpc = (): RpcClient => {
    if (!connection) throw new Error('the webhooks service did not start');
    return new RpcClient(connection, 10_000);
  };

  it('answers its ping over the bus', async () => {
    await expect(rpc().request(WebhooksSubjects.ping, { name: 'tests' })).resolves.toEqual({
      service: 'webhooks',
      message: 'hello tests',
    });
  });

  it('refuses a request that breaks its contract', async () => {
    await expect(rpc().request(WebhooksSubjects.ping, { name: '' })).rejects.toMatchObject({
      code: CommonErrorCode.ValidationFailed,
    });
  });

  it('is ready: its database, the bus and its stream consumers answer', async () => {
    // The consumers of the ten event types attach in the background after boot.
    const ready = await pollUntil(
      async () => {
        const response = await fetch(`${healthUrl}/readyz`);
        return { status: response.status, body: await response.text() };
      },
      (answer) => answer.status === 200,
      { what: 'GET /readyz to answer 200', timeoutMs: 20_000 },
    );
    expect(ready.status).toBe(200);
  });
});
