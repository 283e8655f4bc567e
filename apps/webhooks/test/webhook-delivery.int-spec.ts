import { randomUUID } from 'node:crypto';

import { DeliveryStreamSubjects } from '@envoi/contracts-delivery';
import { DomainsStreamSubjects } from '@envoi/contracts-domains';
import { MessagesStreamSubjects } from '@envoi/contracts-messages';
import { SuppressionsStreamSubjects } from '@envoi/contracts-suppressions';
import { WEBHOOK_EVENT_FLAGS } from '@envoi/contracts-webhooks';
import type { ReceivedCall } from '@envoi/shared-testing';
import { findFreePort, pollUntil } from '@envoi/shared-testing';
import { Webhook } from 'standardwebhooks';

import {
  deliveredEvent,
  newSecret,
  useWebhooksTestRig,
  type WebhooksTestApp,
} from './webhooks-test-app';

/** The payload, after checking the call's signature with the standardwebhooks package. */
function verified(call: ReceivedCall, secret: string): Record<string, unknown> {
  const verifier = new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' });
  return verifier.verify(call.body, call.headers) as Record<string, unknown>;
}

/** A new account's webhook at `url` subscribed to `message.delivered`, and an event it gets. */
async function subscribedEvent(app: WebhooksTestApp, url: string, secret = newSecret()) {
  const accountId = randomUUID();
  const id = await app.createWebhook({ accountId, url, secret, flags: ['on_delivered'] });
  const event = deliveredEvent(accountId, `a@${randomUUID()}.example`);
  await app.publish(DeliveryStreamSubjects.delivered, event);
  return { id, event, accountId };
}

/** Waits until the event's delivery to the webhook reaches `state`. */
async function untilDelivery(
  app: WebhooksTestApp,
  eventId: string,
  webhookId: string,
  state: string,
) {
  await pollUntil(
    () => app.deliveriesOf(eventId),
    (states) => states[webhookId] === state,
    { what: `the delivery ${state}`, timeoutMs: 20_000 },
  );
}

/**
 * The delivery engine against real PostgreSQL and NATS, the service started from dist/, and a
 * loopback receiver: events published on EVENTS reach exactly the subscribed endpoints, signed,
 * retried on failure, and the endpoints' counters follow.
 */
/** jest types its asymmetric matchers `any`, which type-aware lint refuses. */
const anyString: unknown = expect.any(String);

describe('webhook deliveries', () => {
  const rig = useWebhooksTestRig();

  it('sends each event once to every subscribed endpoint, signed, and to no other', async () => {
    const { app, receiver } = rig();
    const account = randomUUID();
    const secret = newSecret();
    const hook = (endpoint: string, extra: object) =>
      app.createWebhook({
        accountId: account,
        url: receiver.url(endpoint),
        secret,
        flags: [],
        ...extra,
      });
    const all = await hook('fan-all', { flags: WEBHOOK_EVENT_FLAGS });
    const scoped = await hook('fan-scoped', { flags: ['on_delivered'], domains: ['one.example'] });
    const otherDomain = await hook('fan-other', {
      flags: ['on_delivered'],
      domains: ['two.example'],
    });
    const flagOff = await hook('fan-flag-off', { flags: ['on_opened'] });
    const disabled = await hook('fan-disabled', { flags: ['on_delivered'], enabled: false });
    const otherAccount = await app.createWebhook({
      accountId: randomUUID(),
      url: receiver.url('fan-other-account'),
      secret,
      flags: WEBHOOK_EVENT_FLAGS,
    });

    const delivered = deliveredEvent(account, 'hello@One.Example');
    const suppression = {
      id: randomUUID(),
      type: 'suppression.created',
      timestamp: '2026-05-06T12:57:06.451529527Z',
      data: {
        account_id: account,
        recipient: 'bounced@example.net',
        created_at: '2026-05-06T12:57:06.451Z',
        expires_at: '2026-06-05T12:57:06.451Z',
        reason: 'Hard bounce',
        sending_domain: 'one.example',
      },
    };
    const dnsError = {
      id: randomUUID(),
      type: 'domain.dns_error',
      timestamp: '2026-05-06T12:59:46Z',
      data: {
        domain: 'two.example',
        account_id: account,
        spf_valid: false,
        dkim_valid: true,
        dmarc_valid: false,
        dns_last_checked_at: '2026-05-06T12:59:46Z',
      },
    };
    await app.publish(DeliveryStreamSubjects.delivered, delivered);
    // The same event again under another message id: the inbox drops it.
    await app.publish(DeliveryStreamSubjects.delivered, delivered, `${delivered.id}-again`);
    await app.publish(SuppressionsStreamSubjects.created, suppression);
    await app.publish(DomainsStreamSubjects.dnsError, dnsError);

    await pollUntil(
      () => [receiver.callsTo('fan-all').length, receiver.callsTo('fan-scoped').length],
      ([toAll, toScoped]) => toAll === 3 && toScoped === 1,
      { what: 'the calls to the subscribed endpoints', timeoutMs: 20_000 },
    );
    await untilDelivery(app, delivered.id, scoped, 'delivered');
    await untilDelivery(app, delivered.id, all, 'delivered');
    await untilDelivery(app, suppression.id, all, 'delivered');
    await untilDelivery(app, dnsError.id, all, 'delivered');
    expect(await app.deliveriesOf(delivered.id)).toEqual({
      [all]: 'delivered',
      [scoped]: 'delivered',
    });
    expect(await app.deliveriesOf(suppression.id)).toEqual({ [all]: 'delivered' });
    expect(await app.deliveriesOf(dnsError.id)).toEqual({ [all]: 'delivered' });
    for (const endpoint of ['fan-other', 'fan-flag-off', 'fan-disabled', 'fan-other-account']) {
      expect(receiver.callsTo(endpoint)).toEqual([]);
    }
    expect([otherDomain, flagOff, disabled, otherAccount]).toHaveLength(4);

    const payloads = receiver.callsTo('fan-all').map((call) => verified(call, secret));
    expect(new Set(receiver.callsTo('fan-all').map((call) => call.headers['webhook-id']))).toEqual(
      new Set([delivered.id, suppression.id, dnsError.id]),
    );
    expect(payloads).toContainEqual({
      type: 'message.delivered',
      webhook_id: all,
      timestamp: delivered.timestamp.replace(/Z$/, '000000Z'),
      data: {
        account_id: account,
        event: 'on_delivered',
        from: 'hello@One.Example',
        recipient: 'to@example.net',
        subject: 'Hello',
        message_id_header: delivered.data.message_id_header,
        id: delivered.data.id,
        is_bot: false,
      },
    });
    expect(payloads).toContainEqual({
      type: 'suppression.created',
      webhook_id: all,
      timestamp: suppression.timestamp,
      data: suppression.data,
    });
    expect(payloads).toContainEqual({
      type: 'domain.dns_error',
      webhook_id: all,
      timestamp: '2026-05-06T12:59:46.000000000Z',
      data: dnsError.data,
    });
    const [toScoped] = receiver.callsTo('fan-scoped');
    expect(toScoped && verified(toScoped, secret)).toMatchObject({ webhook_id: scoped });
    expect(toScoped?.headers['content-type']).toBe('application/json');
    expect(await app.webhook(all)).toMatchObject({
      success_count: '3',
      error_count: '0',
      errors_since_last_success: 0,
      last_request_at: expect.any(Date) as unknown,
    });
  }, 40_000);

  it("fans out a send's reception batch as its events, each under its own webhook-id, to the endpoints of its domain", async () => {
    const { app, receiver } = rig();
    const account = randomUUID();
    const secret = newSecret();
    const scoped = await app.createWebhook({
      accountId: account,
      url: receiver.url('batch-scoped'),
      secret,
      flags: ['on_reception'],
      domains: ['one.example'],
    });
    await app.createWebhook({
      accountId: account,
      url: receiver.url('batch-other'),
      secret,
      flags: ['on_reception'],
      domains: ['two.example'],
    });
    const reception = (n: number) => {
      const messageId = randomUUID();
      return {
        id: randomUUID(),
        type: 'message.reception' as const,
        timestamp: '2026-05-06T12:57:06.451Z',
        data: {
          account_id: account,
          event: 'on_reception' as const,
          from: 'hello@one.example',
          recipient: `to-${n}@example.net`,
          subject: 'Hello',
          message_id_header: `<${messageId}@one.example>`,
          id: messageId,
          is_bot: false,
        },
      };
    };
    const events = [reception(1), reception(2), reception(3)];
    const batch = {
      id: randomUUID(),
      type: 'message.reception_batch' as const,
      timestamp: '2026-05-06T12:57:06.451Z',
      data: { account_id: account, events },
    };
    await app.publish(MessagesStreamSubjects.receptionBatch, batch);
    // The same batch again under another message id: still one delivery per event.
    await app.publish(MessagesStreamSubjects.receptionBatch, batch, `${batch.id}-again`);

    for (const event of events) await untilDelivery(app, event.id, scoped, 'delivered');
    await pollUntil(
      () => app.eventsHandled(),
      (handled) => handled,
      { what: 'both copies of the batch handled', timeoutMs: 20_000 },
    );
    // A second copy in a later pull may call again (at least once), under the same webhook-id.
    const calls = receiver.callsTo('batch-scoped');
    expect(new Set(calls.map((call) => call.headers['webhook-id']))).toEqual(
      new Set(events.map((event) => event.id)),
    );
    for (const event of events) {
      expect(await app.deliveriesOf(event.id)).toEqual({ [scoped]: 'delivered' });
    }
    expect(calls.map((call) => verified(call, secret))).toEqual(
      expect.arrayContaining(
        events.map((event) => ({
          type: 'message.reception',
          webhook_id: scoped,
          timestamp: '2026-05-06T12:57:06.451000000Z',
          data: event.data,
        })),
      ),
    );
    expect(receiver.callsTo('batch-other')).toEqual([]);
    expect(await app.deliveriesOf(batch.id)).toEqual({});
  }, 40_000);

  it('retries a 503, then succeeds with the same id and body; counts both', async () => {
    const { app, receiver } = rig();
    receiver.behave('flaky', (call) => (call === 0 ? 503 : 200));
    const secret = newSecret();
    const { id, event } = await subscribedEvent(app, receiver.url('flaky'), secret);
    await untilDelivery(app, event.id, id, 'delivered');
    const [first, second] = receiver.callsTo('flaky');
    expect(receiver.callsTo('flaky')).toHaveLength(2);
    expect(first?.body).toBe(second?.body);
    expect(first?.headers['webhook-id']).toBe(event.id);
    expect(second?.headers['webhook-id']).toBe(event.id);
    if (second) verified(second, secret);
    expect(await app.attempts(id)).toEqual([
      expect.objectContaining({
        attempt: 1,
        response_status: 503,
        error: null,
        response_body: 'answer 503 to call 0',
        next_retry_at: expect.any(Date) as unknown,
      }),
      expect.objectContaining({ attempt: 2, response_status: 200, next_retry_at: null }),
    ]);
    expect(await app.webhook(id)).toMatchObject({
      success_count: '1',
      error_count: '1',
      errors_since_last_success: 0,
    });
  }, 30_000);

  it('times out a call that hangs and retries it', async () => {
    const { app, receiver } = rig();
    receiver.behave('hangs-once', (call) => (call === 0 ? 'hang' : 204));
    const { id, event } = await subscribedEvent(app, receiver.url('hangs-once'));
    await untilDelivery(app, event.id, id, 'delivered');
    const [timedOut, succeeded] = await app.attempts(id);
    expect(timedOut).toMatchObject({
      attempt: 1,
      response_status: null,
      error: 'timeout: no complete response within 1500 ms',
    });
    expect(timedOut?.duration_ms).toBeGreaterThanOrEqual(1_400);
    expect(succeeded).toMatchObject({ attempt: 2, response_status: 204 });
  }, 30_000);

  it('gives up on a refused endpoint after the last attempt; consecutive failures disable it', async () => {
    const { app } = rig();
    const url = `http://127.0.0.1:${await findFreePort()}/refused`;
    const { id, event, accountId } = await subscribedEvent(app, url);
    await untilDelivery(app, event.id, id, 'given_up');
    const attempts = await app.attempts(id);
    expect(attempts.map((attempt) => [attempt.attempt, attempt.response_status])).toEqual([
      [1, null],
      [2, null],
      [3, null],
    ]);
    expect(attempts[0]?.error).toMatch(/^refused: /);
    expect(attempts[2]?.next_retry_at).toBeNull();
    expect(await app.webhook(id)).toMatchObject({ enabled: true, errors_since_last_success: 3 });

    // Failures 4 and 5 of the next event reach WEBHOOK_DISABLE_AFTER_FAILURES.
    const second = deliveredEvent(accountId, 'a@refused.example');
    await app.publish(DeliveryStreamSubjects.delivered, second);
    await pollUntil(
      () => app.webhook(id),
      (webhook) => !webhook.enabled,
      { what: 'the webhook disabled', timeoutMs: 20_000 },
    );
    expect(await app.webhook(id)).toMatchObject({
      errors_since_last_success: 5,
      error_count: '5',
      disabled_reason: 'too many consecutive failed calls',
    });
    expect(await app.attempts(id)).toHaveLength(5);
    // Once, in the statement that disabled it, for the account's members.
    expect(await app.disabledNotices(id)).toEqual([
      {
        id: anyString,
        type: 'webhook.disabled',
        timestamp: anyString,
        data: {
          account_id: accountId,
          webhook_id: id,
          name: `test ${id}`,
          url,
          reason: 'consecutive_failures',
          consecutive_failures: 5,
          last_status: null,
          disabled_at: anyString,
        },
      },
    ]);
  }, 40_000);

  it('disables an endpoint that answers 410 Gone at once', async () => {
    const { app, receiver } = rig();
    receiver.behave('gone', () => 410);
    const { id, event, accountId } = await subscribedEvent(app, receiver.url('gone'));
    await untilDelivery(app, event.id, id, 'given_up');
    expect(await app.webhook(id)).toMatchObject({
      enabled: false,
      disabled_reason: 'the endpoint answered 410 Gone',
      error_count: '1',
    });
    const [notice, ...more] = await app.disabledNotices(id);
    expect(more).toEqual([]);
    expect(notice?.['data']).toMatchObject({ reason: 'gone', last_status: 410 });
    const later = deliveredEvent(accountId, 'a@gone.example');
    await app.publish(DeliveryStreamSubjects.delivered, later);
    await pollUntil(() => app.eventsHandled(), Boolean, { what: 'the later event handled' });
    expect(await app.deliveriesOf(later.id)).toEqual({});
    expect(receiver.callsTo('gone')).toHaveLength(1);
  }, 30_000);

  it('gives a failing endpoint one place at a time until it answers again', async () => {
    const { app, receiver } = rig();
    receiver.behave('sick', (call) => (call === 0 ? 500 : 'hang'));
    const { id, event, accountId } = await subscribedEvent(app, receiver.url('sick'));
    await pollUntil(
      () => app.attempts(id),
      (attempts) => attempts.length === 1,
      { what: 'the first failure recorded' },
    );
    const more = Array.from({ length: 6 }, () => deliveredEvent(accountId, 'a@sick.example'));
    for (const next of more) await app.publish(DeliveryStreamSubjects.delivered, next);
    // The retry of the first event hangs until its timeout; then the next call goes out.
    await pollUntil(
      () => receiver.callsTo('sick').length,
      (calls) => calls >= 3,
      { what: 'a call after the first timeout', timeoutMs: 20_000 },
    );
    expect(receiver.callsTo('sick')[1]?.headers['webhook-id']).toBe(event.id);
    expect(receiver.peakOpen('sick')).toBe(1);
  }, 30_000);

  it('purges settled deliveries once they are old, never pending ones', async () => {
    const { app, receiver } = rig();
    receiver.behave('purged', () => 204);
    const { id, event } = await subscribedEvent(app, receiver.url('purged'));
    await untilDelivery(app, event.id, id, 'delivered');
    const pendingEvent = deliveredEvent(randomUUID(), 'a@pending.example');
    const pendingHook = await app.createWebhook({
      accountId: pendingEvent.data.account_id,
      url: receiver.url('never-called'),
      secret: newSecret(),
      flags: ['on_delivered'],
    });
    await app.db.query(
      `INSERT INTO webhooks.webhook_deliveries (id, webhook_id, account_id, event_id, event_type, body, next_attempt_at)
       VALUES ($1, $2, $3, $4, 'message.delivered', '{}', now() + interval '1 day')`,
      [randomUUID(), pendingHook, pendingEvent.data.account_id, pendingEvent.id],
    );
    await app.db.query(
      `UPDATE webhooks.webhook_deliveries SET updated_at = now() - interval '31 days'
       WHERE webhook_id = ANY($1)`,
      [[id, pendingHook]],
    );
    await pollUntil(
      () => app.deliveriesOf(event.id),
      (states) => Object.keys(states).length === 0,
      { what: 'the old delivery purged', timeoutMs: 10_000 },
    );
    expect(await app.attempts(id)).toEqual([]);
    expect(await app.deliveriesOf(pendingEvent.id)).toEqual({ [pendingHook]: 'pending' });
  }, 30_000);
});
