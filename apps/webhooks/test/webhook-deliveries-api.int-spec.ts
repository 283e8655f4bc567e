import { randomUUID } from 'node:crypto';

import { CommonErrorCode } from '@envoi/contracts-core';
import { DeliveryStreamSubjects } from '@envoi/contracts-delivery';
import {
  type WebhookAttemptRecord,
  WebhookDeliveriesSubjects,
  WebhooksErrorCode,
} from '@envoi/contracts-webhooks';
import { RpcClient } from '@envoi/shared-nats';
import { pollUntil, WebhookPayloadValidator } from '@envoi/shared-testing';
import { Webhook } from 'standardwebhooks';

import {
  deliveredEvent,
  newSecret,
  useWebhooksTestRig,
  type WebhooksTestApp,
} from './webhooks-test-app';

const NOT_FOUND = { code: WebhooksErrorCode.NotFound };

/**
 * The delivery history API against the service from dist/, real PostgreSQL and NATS, and a
 * loopback receiver (3 attempts at most, retries milliseconds apart).
 */
describe('webhook deliveries API', () => {
  const rig = useWebhooksTestRig();
  const rpc = (): RpcClient => new RpcClient(rig().app.nats, 10_000);

  /** A webhook of a new account at the receiver's `endpoint`, subscribed to message.delivered. */
  async function webhookAt(app: WebhooksTestApp, endpoint: string, domains?: string[]) {
    const accountId = randomUUID();
    const secret = newSecret();
    const url = rig().receiver.url(endpoint);
    const flags = ['on_delivered'] as const;
    const id = await app.createWebhook({ accountId, url, secret, flags, domains });
    return { accountId, id, secret };
  }

  function listAttempts(
    accountId: string,
    webhookId: string,
    page: object = {},
    domains?: string[],
  ) {
    return rpc().request(WebhookDeliveriesSubjects.listAttempts, {
      account_id: accountId,
      webhook_id: webhookId,
      page: { limit: 100, ...page },
      ...(domains ? { domains } : {}),
    });
  }

  async function untilAttempts(accountId: string, webhookId: string, count: number, state: string) {
    return pollUntil(
      () => listAttempts(accountId, webhookId),
      (page) => page.data.length === count && page.data[0]?.delivery_state === state,
      { what: `${count} attempts, the delivery ${state}`, timeoutMs: 20_000 },
    );
  }

  it('lists the attempts of an endpoint newest first, page by page', async () => {
    const { app, receiver } = rig();
    receiver.behave('history', (call) => (call === 0 ? 503 : 200));
    const hook = await webhookAt(app, 'history', ['one.example']);
    const other = await webhookAt(app, 'history-other');
    const event = deliveredEvent(hook.accountId, 'a@one.example');
    await app.publish(DeliveryStreamSubjects.delivered, event);
    await app.publish(
      DeliveryStreamSubjects.delivered,
      deliveredEvent(other.accountId, 'a@one.example'),
    );
    await untilAttempts(hook.accountId, hook.id, 2, 'delivered');

    const first = await listAttempts(hook.accountId, hook.id, { limit: 1 });
    expect(first.has_more).toBe(true);
    expect(first.previous_position).toBeUndefined();
    const [succeeded] = first.data;
    expect(succeeded).toMatchObject<Partial<WebhookAttemptRecord>>({
      object: 'webhook_attempt',
      event_id: event.id,
      event_type: 'message.delivered',
      attempt: 2,
      response_status: 200,
      response_body: 'answer 200 to call 1',
      error: null,
      next_retry_at: null,
      delivery_state: 'delivered',
    });
    expect(succeeded?.duration_ms).toBeGreaterThanOrEqual(0);

    const second = await listAttempts(hook.accountId, hook.id, {
      limit: 1,
      after: first.next_position,
    });
    expect(second.has_more).toBe(false);
    const [failed] = second.data;
    expect(failed).toMatchObject<Partial<WebhookAttemptRecord>>({
      delivery_id: succeeded?.delivery_id,
      event_id: event.id,
      attempt: 1,
      response_status: 503,
      response_body: 'answer 503 to call 0',
      delivery_state: 'delivered',
    });
    expect(Date.parse(failed?.next_retry_at ?? '')).toBeGreaterThanOrEqual(
      Date.parse(failed?.attempted_at ?? ''),
    );

    const back = await listAttempts(hook.accountId, hook.id, {
      limit: 1,
      before: second.previous_position,
    });
    expect(back.data).toEqual(first.data);
  }, 30_000);

  it("answers 404 for the webhook of another account or beyond the key's domains", async () => {
    const { app } = rig();
    const hook = await webhookAt(app, 'hidden', ['one.example']);
    await expect(listAttempts(randomUUID(), hook.id)).rejects.toMatchObject(NOT_FOUND);
    await expect(listAttempts(hook.accountId, hook.id, {}, ['two.example'])).rejects.toMatchObject(
      NOT_FOUND,
    );
    expect((await listAttempts(hook.accountId, hook.id, {}, ['one.example'])).data).toEqual([]);
  });

  it('re-sends a given-up delivery now with the same webhook-id, its attempts counting on', async () => {
    const { app, receiver } = rig();
    let failing = true;
    receiver.behave('given-up', () => (failing ? 500 : 200));
    const hook = await webhookAt(app, 'given-up');
    const other = await webhookAt(app, 'given-up-other');
    const event = deliveredEvent(hook.accountId, 'a@one.example');
    await app.publish(DeliveryStreamSubjects.delivered, event);
    const history = await untilAttempts(hook.accountId, hook.id, 3, 'given_up');
    const deliveryId = history.data[0]?.delivery_id ?? '';
    const ref = { account_id: hook.accountId, webhook_id: hook.id, delivery_id: deliveryId };

    await expect(
      rpc().request(WebhookDeliveriesSubjects.retry, { ...ref, account_id: randomUUID() }),
    ).rejects.toMatchObject(NOT_FOUND);
    await expect(
      rpc().request(WebhookDeliveriesSubjects.retry, {
        ...ref,
        account_id: other.accountId,
        webhook_id: other.id,
      }),
    ).rejects.toMatchObject(NOT_FOUND);
    expect(receiver.callsTo('given-up')).toHaveLength(3);

    failing = false;
    const retried = await rpc().request(WebhookDeliveriesSubjects.retry, ref);
    expect(retried).toMatchObject({
      object: 'webhook_delivery',
      id: deliveryId,
      webhook_id: hook.id,
      event_id: event.id,
      state: 'pending',
      attempts: 3,
    });
    expect(retried.next_attempt_at).not.toBeNull();

    const after = await untilAttempts(hook.accountId, hook.id, 4, 'delivered');
    expect(after.data[0]).toMatchObject({ attempt: 4, response_status: 200 });
    const calls = receiver.callsTo('given-up');
    expect(calls).toHaveLength(4);
    expect(new Set(calls.map((call) => call.headers['webhook-id']))).toEqual(new Set([event.id]));

    // A delivered one is sent again too.
    await rpc().request(WebhookDeliveriesSubjects.retry, ref);
    await untilAttempts(hook.accountId, hook.id, 5, 'delivered');
    expect(receiver.callsTo('given-up')).toHaveLength(5);
  }, 30_000);

  it('sends signed sample events of the listed types to that webhook only', async () => {
    const { app, receiver } = rig();
    const hook = await webhookAt(app, 'trigger');
    const sibling = await app.createWebhook({
      accountId: hook.accountId,
      url: receiver.url('trigger-sibling'),
      secret: newSecret(),
      flags: ['on_delivered', 'on_dns_error'],
    });
    const ref = { account_id: hook.accountId, webhook_id: hook.id };

    const triggered = await rpc().request(WebhookDeliveriesSubjects.trigger, {
      ...ref,
      body: { events: ['domain.dns_error', 'message.clicked'] },
    });
    expect(triggered.data.map((delivery) => [delivery.event_type, delivery.state])).toEqual([
      ['domain.dns_error', 'pending'],
      ['message.clicked', 'pending'],
    ]);

    const calls = await pollUntil(
      () => receiver.callsTo('trigger'),
      (received) => received.length === 2,
      { what: 'the sample events', timeoutMs: 20_000 },
    );
    const verifier = new Webhook(Buffer.from(hook.secret, 'utf8'), { format: 'raw' });
    const validator = new WebhookPayloadValidator();
    const payloads = calls.map((call) => {
      const payload = verifier.verify(call.body, call.headers) as {
        type: 'domain.dns_error' | 'message.clicked';
        webhook_id: string;
        data: { account_id: string };
      };
      expect(validator.violations(payload.type, payload)).toEqual([]);
      return { ...payload, eventId: call.headers['webhook-id'] };
    });
    expect(payloads.map((payload) => payload.type).sort()).toEqual([
      'domain.dns_error',
      'message.clicked',
    ]);
    for (const payload of payloads) {
      expect(payload.webhook_id).toBe(hook.id);
      expect(payload.data.account_id).toBe(hook.accountId);
      expect(payload.eventId).toMatch(/^sample-/);
    }
    expect(payloads.map((payload) => payload.eventId).sort()).toEqual(
      triggered.data.map((delivery) => delivery.event_id).sort(),
    );
    await untilAttempts(hook.accountId, hook.id, 2, 'delivered');
    expect(await app.attempts(sibling)).toEqual([]);
    expect(receiver.callsTo('trigger-sibling')).toEqual([]);
  }, 30_000);

  it.each([[[]], [['message.routing']], [['message.delivered', 'nope']]])(
    'refuses the events %j',
    async (events) => {
      const { app } = rig();
      const hook = await webhookAt(app, 'trigger-refused');
      await expect(
        rpc().request(WebhookDeliveriesSubjects.trigger, {
          account_id: hook.accountId,
          webhook_id: hook.id,
          body: { events: events as never },
        }),
      ).rejects.toMatchObject({ code: CommonErrorCode.ValidationFailed });
    },
  );

  it('answers 404 for a trigger on a webhook the caller cannot see', async () => {
    const { app } = rig();
    const hook = await webhookAt(app, 'trigger-hidden', ['one.example']);
    await expect(
      rpc().request(WebhookDeliveriesSubjects.trigger, {
        account_id: hook.accountId,
        webhook_id: hook.id,
        domains: ['two.example'],
        body: { events: ['message.delivered'] },
      }),
    ).rejects.toMatchObject(NOT_FOUND);
  });
});
