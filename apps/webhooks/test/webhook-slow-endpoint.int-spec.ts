import { randomUUID } from 'node:crypto';

import { DeliveryStreamSubjects } from '@envoi/contracts-delivery';
import { pollUntil } from '@envoi/shared-testing';

import { deliveredEvent, newSecret, useWebhooksTestRig } from './webhooks-test-app';

/** Calls time out after 8 s: long enough that a loaded machine cannot blur the order below. */
const CALL_TIMEOUT_MS = 8_000;

/**
 * An endpoint that never answers, against real PostgreSQL and NATS and the service from dist/:
 * it holds at most 4 calls open, and another endpoint of the same account gets every event
 * while those calls are still hanging.
 */
describe('a hanging webhook endpoint', () => {
  const rig = useWebhooksTestRig({
    WEBHOOK_TIMEOUT_MS: String(CALL_TIMEOUT_MS),
    WEBHOOK_LEASE_MS: String(CALL_TIMEOUT_MS + 2_000),
  });

  it('keeps a slow endpoint from delaying another, with at most 4 calls open to it', async () => {
    const { app, receiver } = rig();
    const account = randomUUID();
    receiver.behave('slow', () => 'hang');
    const secret = newSecret();
    const flags = ['on_delivered'] as const;
    await app.createWebhook({
      accountId: account,
      url: receiver.url('slow'),
      secret,
      flags,
      domains: ['slow.example'],
    });
    await app.createWebhook({ accountId: account, url: receiver.url('fast'), secret, flags });
    const events = Array.from({ length: 20 }, () => deliveredEvent(account, 'a@slow.example'));
    for (const event of events) await app.publish(DeliveryStreamSubjects.delivered, event);

    await pollUntil(
      () => receiver.callsTo('fast').length,
      (count) => count === 20,
      { what: 'every event at the fast endpoint', timeoutMs: 20_000 },
    );
    // Every fast call arrived before the slow endpoint's first call could time out, and in that
    // time the slow endpoint never had more than 4 calls.
    const lastFast = Math.max(...receiver.callsTo('fast').map((call) => call.receivedAt));
    const firstSlow = Math.min(...receiver.callsTo('slow').map((call) => call.receivedAt));
    expect(lastFast - firstSlow).toBeLessThan(CALL_TIMEOUT_MS);
    expect(receiver.callsTo('slow').length).toBeLessThanOrEqual(4);
    expect(receiver.peakOpen('slow')).toBeLessThanOrEqual(4);
  }, 40_000);
});
