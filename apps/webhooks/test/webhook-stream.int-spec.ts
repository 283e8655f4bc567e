import { randomUUID } from 'node:crypto';

import { type ListenerStreamAttachedEvent } from '@envoi/contracts-core';
import { DeliveryStreamSubjects } from '@envoi/contracts-delivery';
import {
  WebhookDeliveriesSubjects,
  WebhooksErrorCode,
  WebhooksSubjects,
  WebhookStreamSubjects,
} from '@envoi/contracts-webhooks';
import { RpcClient, subscribeBroadcast } from '@envoi/shared-nats';
import { pollUntil, WebhookPayloadValidator } from '@envoi/shared-testing';

import { deliveredEvent, newSecret, useWebhooksTestRig } from './webhooks-test-app';

/** Far beyond the test TTL of temporary webhooks (3 s): an attached listener keeps its webhook. */
const LEASE_MS = 20_000;

/**
 * Webhook streams against the service from dist/, real PostgreSQL and NATS: temporary webhooks,
 * one listener at a time, the buffer replayed in order and removed once acknowledged, the purge.
 */
describe('webhook streams', () => {
  const rig = useWebhooksTestRig();
  const rpc = (): RpcClient => new RpcClient(rig().app.nats, 10_000);
  const payloads = new WebhookPayloadValidator();

  function attach(accountId: string, webhookId: string, sessionId: string, force = false) {
    return rpc().request(WebhookStreamSubjects.attach, {
      account_id: accountId,
      target_id: webhookId,
      session_id: sessionId,
      force,
      lease_ms: LEASE_MS,
    });
  }

  function read(webhookId: string, sessionId: string, afterSeq = 0) {
    return rpc().request(WebhookStreamSubjects.read, {
      target_id: webhookId,
      session_id: sessionId,
      after_seq: afterSeq,
      limit: 100,
    });
  }

  function ack(webhookId: string, sessionId: string, seq: number) {
    return rpc().request(WebhookStreamSubjects.ack, {
      target_id: webhookId,
      session_id: sessionId,
      seq,
      lease_ms: LEASE_MS,
    });
  }

  async function publishDelivered(accountId: string, count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let index = 0; index < count; index++) {
      const event = deliveredEvent(accountId, 'a@one.example');
      await rig().app.publish(DeliveryStreamSubjects.delivered, event);
      ids.push(event.id);
    }
    return ids;
  }

  async function untilBuffered(webhookId: string, sessionId: string, count: number) {
    return pollUntil(
      () => read(webhookId, sessionId),
      (page) => page.data.length >= count,
      { what: `${count} buffered events`, timeoutMs: 15_000 },
    );
  }

  it('buffers a temporary webhook’s events, never lists it, replays them in order and drops what was acknowledged', async () => {
    const accountId = randomUUID();
    const opened = await rpc().request(WebhookStreamSubjects.open, { account_id: accountId });
    const listed = await rpc().request(WebhooksSubjects.list, {
      account_id: accountId,
      page: { limit: 100 },
    });
    expect(listed.data).toEqual([]);
    const record = await rpc().request(WebhooksSubjects.get, {
      account_id: accountId,
      webhook_id: opened.webhook_id,
    });
    expect(record).toMatchObject({ scope: 'global', on_delivered: true, on_dns_error: true });

    // A first listener sees the events buffered, then leaves without acknowledging them.
    const first = randomUUID();
    await attach(accountId, opened.webhook_id, first);
    const eventIds = await publishDelivered(accountId, 3);
    await untilBuffered(opened.webhook_id, first, 3);
    await rpc().request(WebhookStreamSubjects.detach, {
      target_id: opened.webhook_id,
      session_id: first,
    });
    const session = randomUUID();
    const attached = await attach(accountId, opened.webhook_id, session);
    const page = await read(opened.webhook_id, session);
    expect(page.data.map((event) => event.event_id)).toEqual(eventIds);
    expect(attached.replay_until_seq).toBe(page.data[2]?.seq);
    for (const event of page.data) {
      const body = JSON.parse(event.body) as { webhook_id: string };
      expect(body.webhook_id).toBe(opened.webhook_id);
      expect(payloads.violations('message.delivered', body)).toEqual([]);
    }
    const deliveries = await rig().app.db.query(
      'SELECT 1 FROM webhooks.webhook_deliveries WHERE webhook_id = $1',
      [opened.webhook_id],
    );
    expect(deliveries.rowCount).toBe(0);

    expect(await ack(opened.webhook_id, session, page.data[1]?.seq ?? 0)).toEqual({
      attached: true,
    });
    const rest = await read(opened.webhook_id, session);
    expect(rest.data.map((event) => event.event_id)).toEqual([eventIds[2]]);
  }, 30_000);

  it('refuses a second listener with 409 unless forced, and the replaced one learns it', async () => {
    const accountId = randomUUID();
    const { webhook_id: webhookId } = await rpc().request(WebhookStreamSubjects.open, {
      account_id: accountId,
    });
    const first = randomUUID();
    const second = randomUUID();
    await attach(accountId, webhookId, first);
    await expect(attach(accountId, webhookId, second)).rejects.toMatchObject({
      code: WebhooksErrorCode.StreamListenerAttached,
    });
    const announced: ListenerStreamAttachedEvent[] = [];
    const subscription = subscribeBroadcast(
      rig().app.nats,
      WebhookStreamSubjects.attached,
      (event) => announced.push(event),
      () => undefined,
    );
    try {
      await rig().app.nats.flush();
      await attach(accountId, webhookId, second, true);
      await pollUntil(
        () => announced.filter((event) => event.target_id === webhookId),
        (events) => events.length === 1,
        { what: 'the attach broadcast' },
      );
      expect(announced.find((event) => event.target_id === webhookId)?.session_id).toBe(second);
    } finally {
      subscription.unsubscribe();
    }
    expect(await ack(webhookId, first, 0)).toEqual({ attached: false });
    await expect(read(webhookId, first)).rejects.toMatchObject({
      code: WebhooksErrorCode.StreamNotAttached,
    });
    expect(await ack(webhookId, second, 0)).toEqual({ attached: true });
    await expect(attach(randomUUID(), webhookId, randomUUID())).rejects.toMatchObject({
      code: WebhooksErrorCode.NotFound,
    });
    // A domain-scoped key does not see a global (temporary) webhook.
    await expect(
      rpc().request(WebhookStreamSubjects.attach, {
        account_id: accountId,
        target_id: webhookId,
        session_id: randomUUID(),
        force: true,
        lease_ms: LEASE_MS,
        domains: ['one.example'],
      }),
    ).rejects.toMatchObject({ code: WebhooksErrorCode.NotFound });
    expect(await ack(webhookId, second, 0)).toEqual({ attached: true });
  });

  it('copies an existing webhook’s events to its stream while its endpoint still gets them', async () => {
    const { app, receiver } = rig();
    receiver.behave('streamed', () => 200);
    const accountId = randomUUID();
    const webhookId = await app.createWebhook({
      accountId,
      url: receiver.url('streamed'),
      secret: newSecret(),
      flags: ['on_delivered'],
    });
    await expect(
      rpc().request(WebhookStreamSubjects.open, {
        account_id: accountId,
        webhook_id: randomUUID(),
      }),
    ).rejects.toMatchObject({ code: WebhooksErrorCode.NotFound });
    await expect(
      rpc().request(WebhookStreamSubjects.open, {
        account_id: accountId,
        webhook_id: webhookId,
        domains: ['one.example'],
      }),
    ).rejects.toMatchObject({ code: WebhooksErrorCode.NotFound });
    await rpc().request(WebhookStreamSubjects.open, {
      account_id: accountId,
      webhook_id: webhookId,
    });
    const [eventId] = await publishDelivered(accountId, 1);
    const session = randomUUID();
    await attach(accountId, webhookId, session);
    const page = await untilBuffered(webhookId, session, 1);
    expect(page.data.map((event) => event.event_id)).toEqual([eventId]);
    await pollUntil(
      () => app.deliveriesOf(eventId ?? ''),
      (states) => states[webhookId] === 'delivered',
      { what: 'the endpoint delivery', timeoutMs: 15_000 },
    );
  }, 30_000);

  it('sends sample events of a trigger to a temporary webhook’s stream', async () => {
    const accountId = randomUUID();
    const { webhook_id: webhookId } = await rpc().request(WebhookStreamSubjects.open, {
      account_id: accountId,
    });
    const session = randomUUID();
    await attach(accountId, webhookId, session);
    const triggered = await rpc().request(WebhookDeliveriesSubjects.trigger, {
      account_id: accountId,
      webhook_id: webhookId,
      body: { events: ['message.opened', 'domain.dns_error'] },
    });
    expect(triggered.data).toEqual([]);
    const page = await read(webhookId, session);
    expect(page.data.map((event) => event.event_type)).toEqual([
      'message.opened',
      'domain.dns_error',
    ]);
  });

  it('purges a temporary webhook once it had no listener for the TTL', async () => {
    const accountId = randomUUID();
    const { webhook_id: webhookId } = await rpc().request(WebhookStreamSubjects.open, {
      account_id: accountId,
    });
    const session = randomUUID();
    await attach(accountId, webhookId, session);
    // Attached: a lease far beyond the TTL keeps it.
    expect(await ack(webhookId, session, 0)).toEqual({ attached: true });
    expect(
      await rpc().request(WebhookStreamSubjects.detach, {
        target_id: webhookId,
        session_id: session,
      }),
    ).toEqual({ attached: false });
    await pollUntil(
      () => rig().app.db.query('SELECT 1 FROM webhooks.webhooks WHERE id = $1', [webhookId]),
      (result) => result.rowCount === 0,
      { what: 'the purge of the idle temporary webhook', timeoutMs: 15_000 },
    );
  }, 30_000);
});
