import { randomUUID } from 'node:crypto';

import { DeliveryStreamSubjects } from '@envoi/contracts-delivery';
import { pollUntil } from '@envoi/shared-testing';

import {
  deliveredEvent,
  newSecret,
  useWebhooksTestRig,
  type WebhooksTestApp,
} from './webhooks-test-app';

/** Leases of 6 s over calls of at most 1.5 s: a delivery can wait for a call, so leases go ahead. */
const LEASES_AHEAD = {
  WEBHOOK_LEASE_MS: '6000',
  WEBHOOK_TIMEOUT_MS: '1500',
  // Calls of 400 ms outlast their batch's wait: they, and those after them, go through the database.
  WEBHOOK_DIRECT_WAIT_MS: '100',
};

async function leasedOf(app: WebhooksTestApp, webhookId: string): Promise<number> {
  const { rows } = await app.db.query<{ leased: number }>(
    `SELECT count(*)::int AS leased FROM webhooks.webhook_deliveries
     WHERE webhook_id = $1 AND state = 'pending' AND lease_token IS NOT NULL`,
    [webhookId],
  );
  return rows[0]?.leased ?? 0;
}

/**
 * The service leasing deliveries ahead of its calls (real PostgreSQL and NATS, the service from
 * dist/): an endpoint's calls stay bounded while more of its deliveries wait leased, and a replica
 * that stops gives back those it has not called.
 */
describe('webhook deliveries leased ahead of their calls', () => {
  const rig = useWebhooksTestRig(LEASES_AHEAD);

  it('bounds the calls to a slow endpoint while more wait leased; the fast one is not held', async () => {
    const { app, receiver } = rig();
    const account = randomUUID();
    const secret = newSecret();
    const flags = ['on_delivered'] as const;
    receiver.behave('slow-ahead', () => ({ status: 200, afterMs: 400 }));
    const slow = await app.createWebhook({
      accountId: account,
      url: receiver.url('slow-ahead'),
      secret,
      flags,
      domains: ['slow.example'],
    });
    await app.createWebhook({ accountId: account, url: receiver.url('fast-ahead'), secret, flags });
    const events = Array.from({ length: 24 }, () => deliveredEvent(account, 'a@slow.example'));
    for (const event of events) await app.publish(DeliveryStreamSubjects.delivered, event);

    await pollUntil(
      () => leasedOf(app, slow),
      (leased) => leased > 4,
      { what: 'more of the slow endpoint’s deliveries leased than calls open', timeoutMs: 10_000 },
    );
    await pollUntil(
      () => receiver.callsTo('fast-ahead').length,
      (count) => count === 24,
      { what: 'every event at the fast endpoint', timeoutMs: 10_000 },
    );
    await pollUntil(
      () => receiver.callsTo('slow-ahead').length,
      (count) => count === 24,
      { what: 'every event at the slow endpoint', timeoutMs: 20_000 },
    );
    expect(receiver.peakOpen('slow-ahead')).toBeLessThanOrEqual(4);
    const fastIds = new Set(
      receiver.callsTo('fast-ahead').map((call) => call.headers['webhook-id']),
    );
    expect(fastIds.size).toBe(24);
  }, 40_000);

  it('gives back the deliveries it has not called when it stops', async () => {
    const { app, receiver } = rig();
    const account = randomUUID();
    receiver.behave('stopping-ahead', () => ({ status: 200, afterMs: 1_000 }));
    const hook = await app.createWebhook({
      accountId: account,
      url: receiver.url('stopping-ahead'),
      secret: newSecret(),
      flags: ['on_delivered'],
    });
    const events = Array.from({ length: 12 }, () => deliveredEvent(account, 'a@stop.example'));
    for (const event of events) await app.publish(DeliveryStreamSubjects.delivered, event);
    await pollUntil(
      () => leasedOf(app, hook),
      (leased) => leased > 4,
      { what: 'deliveries leased ahead', timeoutMs: 10_000 },
    );

    await app.service?.stop();
    // Those in a call were recorded, the others given back: none stays leased.
    expect(await leasedOf(app, hook)).toBe(0);
    await app.startService();
    await pollUntil(
      () =>
        new Set(receiver.callsTo('stopping-ahead').map((call) => call.headers['webhook-id'])).size,
      (count) => count === 12,
      { what: 'every event delivered after the restart', timeoutMs: 20_000 },
    );
  }, 40_000);
});
