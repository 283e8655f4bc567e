import { randomUUID } from 'node:crypto';

import { DeliveryStreamSubjects } from '@envoi/contracts-delivery';
import { pollUntil } from '@envoi/shared-testing';

import { newSecret, useWebhooksTestRig } from './webhooks-test-app';

const EVENTS = 200;
/** The kill lands once this many calls have reached the receiver. */
const KILL_AFTER_CALLS = 40;

/**
 * The webhooks service, started from dist/, is killed with SIGKILL (its own PID) in the middle of
 * a burst: events not yet fanned out stay unacknowledged on the stream, calls in flight keep
 * their leases. Started again, it sends every event; duplicates (the calls in flight at the kill)
 * carry the same webhook-id, so a receiver that de-duplicates sees each event exactly once.
 */
describe('webhooks service killed mid-burst', () => {
  // Events in hand at the kill come back once their ack wait ends: 10 s rather than 30 s.
  const rig = useWebhooksTestRig({ EVENTS_ACK_WAIT_MS: '10000' });

  it('loses nothing', async () => {
    const test = rig();
    const { app, receiver } = test;
    if (!app.service) throw new Error('the webhooks service did not start');
    // Answers come 50 ms late, so that calls are in flight when the kill lands.
    receiver.behave('burst', () => ({ status: 200, afterMs: 50 }));
    const accountId = randomUUID();
    const webhookId = await app.createWebhook({
      accountId,
      url: receiver.url('burst'),
      secret: newSecret(),
      flags: ['on_delivered'],
    });
    const eventIds = Array.from({ length: EVENTS }, () => randomUUID());
    const publishing = (async () => {
      for (const id of eventIds) {
        await test.app.publish(DeliveryStreamSubjects.delivered, {
          id,
          type: 'message.delivered',
          timestamp: new Date().toISOString(),
          data: {
            account_id: accountId,
            event: 'on_delivered',
            from: 'a@burst.example',
            recipient: 'to@example.net',
            subject: 'Burst',
            message_id_header: `<${id}@burst.example>`,
            id,
          },
        });
      }
    })();

    await pollUntil(
      () => test.receiver.callsTo('burst').length,
      (calls) => calls >= KILL_AFTER_CALLS,
      { what: `${KILL_AFTER_CALLS} calls before the kill`, timeoutMs: 20_000 },
    );
    const killed = app.service;
    await killed.kill();
    expect(killed.child.signalCode).toBe('SIGKILL');
    const beforeRestart = new Set(
      receiver.callsTo('burst').map((call) => call.headers['webhook-id']),
    );
    await publishing;
    expect(beforeRestart.size).toBeLessThan(EVENTS);

    await app.startService();
    const received = await pollUntil(
      () => new Set(test.receiver.callsTo('burst').map((call) => call.headers['webhook-id'])),
      (ids) => ids.size === EVENTS,
      { what: 'every event at the endpoint', timeoutMs: 40_000 },
    );
    expect([...received].sort()).toEqual([...eventIds].sort());
    await pollUntil(
      async () => {
        const { rows } = await test.app.db.query<{ state: string; count: number }>(
          `SELECT state, count(*)::int AS count FROM webhooks.webhook_deliveries
           WHERE webhook_id = $1 GROUP BY state`,
          [webhookId],
        );
        return rows;
      },
      (rows) => rows.length === 1 && rows[0]?.state === 'delivered' && rows[0].count === EVENTS,
      { what: 'every delivery recorded as delivered', timeoutMs: 20_000 },
    );
    const calls = receiver.callsTo('burst').length;
    console.log(
      `webhooks kill -9: ${EVENTS} events, ${beforeRestart.size} received before the kill, ` +
        `lost ${EVENTS - received.size}, duplicate calls ${calls - EVENTS}`,
    );
  }, 90_000);
});
