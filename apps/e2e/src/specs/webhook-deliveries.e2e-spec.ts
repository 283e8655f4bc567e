import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import type {
  CreatedWebhookRecord,
  TriggeredWebhookEventsRecord,
  WebhookAttemptRecord,
  WebhookDeliveryRecord,
} from '@envoi/contracts-webhooks';
import { pollUntil } from '@envoi/shared-testing';
import { Webhook } from 'standardwebhooks';

import {
  type AccountSession,
  closeSessions,
  createAccountSession,
  createKey,
} from '../support/account-session';
import type { RequestOptions } from '../support/api-client';
import { uniqueDomain } from '../support/domains';
import { expectError } from '../support/expect-error';

interface AttemptList {
  object: 'list';
  data: WebhookAttemptRecord[];
  pagination: { has_more: boolean; next_cursor?: string; previous_cursor?: string };
}

interface ReceivedCall {
  headers: Record<string, string>;
  body: string;
}

// The delivery history, retry and trigger routes are beyond the reference contract (README).
const BEYOND_CONTRACT: RequestOptions = { contract: 'skip' };
const INSUFFICIENT = 'insufficient permissions for the required scope';

/** A loopback endpoint: answers each call with the status `answer` gives, and records it. */
class Receiver {
  readonly calls: ReceivedCall[] = [];
  private constructor(
    private readonly server: http.Server,
    private readonly answer: (call: number) => number,
  ) {}

  static async start(answer: (call: number) => number): Promise<Receiver> {
    const receiver = new Receiver(http.createServer(), answer);
    receiver.server.on('request', (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const status = receiver.answer(receiver.calls.length);
        receiver.calls.push({
          headers: Object.fromEntries(
            Object.entries(request.headers).map(([name, value]) => [name, String(value)]),
          ),
          body: Buffer.concat(chunks).toString('utf8'),
        });
        response.writeHead(status).end(`status ${status}`);
      });
    });
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Beyond the reference: an endpoint's delivery attempts, manual retries and sample events. */
describe('webhook deliveries API (issue 15)', () => {
  let session: AccountSession;
  let receiver: Receiver;

  beforeAll(async () => {
    session = await createAccountSession();
    // The first call fails: the history shows a 503, then the 200s.
    receiver = await Receiver.start((call) => (call === 0 ? 503 : 200));
  });

  afterAll(async () => {
    await receiver.close();
    await closeSessions();
  });

  async function createWebhook(body: Record<string, unknown> = {}): Promise<CreatedWebhookRecord> {
    const response = await session.api.post<CreatedWebhookRecord>(session.path('/webhooks'), {
      name: 'deliveries',
      url: receiver.url,
      scope: 'global',
      ...body,
    });
    expect(response.status).toBe(201);
    return response.body;
  }

  const deliveriesPath = (webhookId: string, query = '') =>
    session.path(`/webhooks/${webhookId}/deliveries${query}`);

  it('sends signed sample events, lists their attempts page by page, and re-sends one', async () => {
    const webhook = await createWebhook();
    const triggered = await session.api.post<TriggeredWebhookEventsRecord>(
      session.path(`/webhooks/${webhook.id}/trigger`),
      { events: ['message.delivered', 'domain.dns_error'] },
      BEYOND_CONTRACT,
    );
    expect(triggered.status).toBe(202);
    expect(triggered.body.data.map((delivery) => delivery.event_type)).toEqual([
      'message.delivered',
      'domain.dns_error',
    ]);

    const history = await pollUntil(
      () => session.api.get<AttemptList>(deliveriesPath(webhook.id), BEYOND_CONTRACT),
      (response) =>
        response.body.data.length === 3 &&
        response.body.data.every((attempt) => attempt.delivery_state === 'delivered'),
      { what: 'a failed and two successful attempts', timeoutMs: 30_000 },
    );
    // Both calls may be in flight at once: the failed one is not always recorded first.
    const statuses = history.body.data.map((attempt) => attempt.response_status);
    expect([...statuses].sort()).toEqual([200, 200, 503]);
    const failed = history.body.data.find((attempt) => attempt.response_status === 503);
    expect(failed).toMatchObject({
      object: 'webhook_attempt',
      attempt: 1,
      response_body: 'status 503',
      error: null,
      delivery_state: 'delivered',
    });
    expect(failed?.next_retry_at).not.toBeNull();
    const retriedOnSchedule = history.body.data.find(
      (attempt) => attempt.delivery_id === failed?.delivery_id && attempt.attempt === 2,
    );
    expect(retriedOnSchedule?.response_status).toBe(200);

    const verifier = new Webhook(Buffer.from(webhook.secret, 'utf8'), { format: 'raw' });
    const payloads = receiver.calls.map(
      (call) => verifier.verify(call.body, call.headers) as { type: string; webhook_id: string },
    );
    expect(new Set(payloads.map((payload) => payload.type))).toEqual(
      new Set(['message.delivered', 'domain.dns_error']),
    );
    expect(payloads.every((payload) => payload.webhook_id === webhook.id)).toBe(true);

    const first = await session.api.get<AttemptList>(
      deliveriesPath(webhook.id, '?limit=2'),
      BEYOND_CONTRACT,
    );
    expect(first.body.data).toEqual(history.body.data.slice(0, 2));
    expect(first.body.pagination.has_more).toBe(true);
    const second = await session.api.get<AttemptList>(
      deliveriesPath(webhook.id, `?limit=2&after=${first.body.pagination.next_cursor ?? ''}`),
      BEYOND_CONTRACT,
    );
    expect(second.body.data).toEqual(history.body.data.slice(2));
    expect(second.body.pagination.has_more).toBe(false);

    const delivered = history.body.data[0];
    const retried = await session.api.post<WebhookDeliveryRecord>(
      session.path(`/webhooks/${webhook.id}/deliveries/${delivered?.delivery_id ?? ''}/retry`),
      undefined,
      BEYOND_CONTRACT,
    );
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({
      object: 'webhook_delivery',
      id: delivered?.delivery_id,
      state: 'pending',
    });
    const calls = await pollUntil(
      () => receiver.calls,
      (received) => received.length === 4,
      { what: 'the re-sent delivery', timeoutMs: 30_000 },
    );
    expect(calls[3]?.headers['webhook-id']).toBe(delivered?.event_id);
  }, 60_000);

  it('answers 400 for an unknown event type or an empty list, 404 for an unknown delivery', async () => {
    const webhook = await createWebhook();
    for (const events of [[], ['message.nope'], 'message.delivered']) {
      expectError(
        await session.api.post(
          session.path(`/webhooks/${webhook.id}/trigger`),
          { events },
          BEYOND_CONTRACT,
        ),
        400,
      );
    }
    expectError(
      await session.api.post(
        session.path(`/webhooks/${webhook.id}/deliveries/${randomUUID()}/retry`),
        undefined,
        BEYOND_CONTRACT,
      ),
      404,
    );
  });

  it('needs the read scope to list and the write scope to retry or trigger', async () => {
    const mine = uniqueDomain();
    const theirs = uniqueDomain();
    for (const domain of [mine, theirs]) {
      expect((await session.api.post(session.path('/domains'), { domain })).status).toBe(201);
    }
    const global = await createWebhook({ on_delivered: false });
    const ofTheirs = await createWebhook({ scope: 'scoped', domains: [theirs] });
    const none = await createKey(session, ['accounts:read']);
    const reader = await createKey(session, ['webhooks:read:all']);
    const domainKey = await createKey(session, [
      `webhooks:read:{${mine}}`,
      `webhooks:write:{${mine}}`,
    ]);
    const retryPath = (id: string) =>
      session.path(`/webhooks/${id}/deliveries/${randomUUID()}/retry`);
    const triggerPath = (id: string) => session.path(`/webhooks/${id}/trigger`);
    const events = { events: ['message.delivered'] };

    expectError(
      await none.client.get(deliveriesPath(global.id), BEYOND_CONTRACT),
      403,
      INSUFFICIENT,
    );
    expect((await reader.client.get(deliveriesPath(global.id), BEYOND_CONTRACT)).status).toBe(200);
    expectError(
      await reader.client.post(retryPath(global.id), undefined, BEYOND_CONTRACT),
      403,
      INSUFFICIENT,
    );
    expectError(
      await reader.client.post(triggerPath(global.id), events, BEYOND_CONTRACT),
      403,
      INSUFFICIENT,
    );
    for (const hidden of [global.id, ofTheirs.id]) {
      expectError(await domainKey.client.get(deliveriesPath(hidden), BEYOND_CONTRACT), 404);
      expectError(await domainKey.client.post(retryPath(hidden), undefined, BEYOND_CONTRACT), 404);
      expectError(await domainKey.client.post(triggerPath(hidden), events, BEYOND_CONTRACT), 404);
    }
  });
});
