import { readFileSync } from 'node:fs';

import type { DomainRecord } from '@envoi/contracts-domains';
import type { CreatedWebhookRecord, WebhookRecord } from '@envoi/contracts-webhooks';
import { pollUntil, type WebhookPayloadType, WebhookPayloadValidator } from '@envoi/shared-testing';
import WebSocket from 'ws';

import {
  type AccountSession,
  closeSessions,
  createAccountSession,
  createKey,
} from '../support/account-session';
import type { RequestOptions } from '../support/api-client';
import { webhooksContractFile } from '../support/contract/contract-files';
import { createVerifiedDomain } from '../support/domains';
import { e2eEnvironment } from '../support/environment';
import { startGatewayReplica } from '../support/gateway-replica';
import { CheckedWebhookReceiver } from '../support/webhook-receiver';

// POST …/webhooks/stream and the WebSocket are beyond openapi.yaml (platform notes 1.12).
const BEYOND_CONTRACT: RequestOptions = { contract: 'skip' };

interface StreamOpened {
  webhook_id: string;
  ws_url: string;
}

/** A frame as the reference CLI reads it (internal/client/websocket.go). */
interface Frame {
  type: string;
  event?: {
    type: string;
    stream_id: string;
    account_id: string;
    data: { type: string; webhook_id: string; timestamp: string; data: Record<string, unknown> };
    metadata: Record<string, string>;
    timestamp: number;
  };
  session_id?: string;
  stream?: string;
  timestamp: number;
}

/** The refusal of a handshake: its status and `{message}` body. */
class HandshakeRefused extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`handshake refused: ${status} ${body}`);
  }
}

/** A WebSocket client connecting the way `ahasend webhooks listen` does. */
class Listener {
  readonly frames: Frame[] = [];
  pings = 0;
  closed: { code: number; reason: string } | undefined;

  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (data: WebSocket.RawData) => {
      const bytes = Array.isArray(data)
        ? Buffer.concat(data)
        : Buffer.isBuffer(data)
          ? data
          : Buffer.from(new Uint8Array(data));
      this.frames.push(JSON.parse(bytes.toString('utf8')) as Frame);
    });
    socket.on('ping', () => {
      this.pings++;
    });
    socket.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
    });
  }

  static connect(wsUrl: string, key: string, force = false): Promise<Listener> {
    const url = new URL(wsUrl);
    url.searchParams.set('api_secret_key', key);
    if (force) url.searchParams.set('force_reconnect', 'true');
    const socket = new WebSocket(url, {
      ca: readFileSync(e2eEnvironment().caFile),
      handshakeTimeout: 10_000,
    });
    const listener = new Listener(socket);
    return new Promise((resolve, reject) => {
      socket.once('open', () => resolve(listener));
      socket.once('unexpected-response', (_request, response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          reject(
            new HandshakeRefused(response.statusCode ?? 0, Buffer.concat(chunks).toString('utf8')),
          ),
        );
      });
      socket.once('error', reject);
    });
  }

  events(): Frame[] {
    return this.frames.filter((frame) => frame.type === 'event' || frame.type === 'replay');
  }

  /** The event frames once `count` arrived (at most 20 s). */
  until(count: number, what: string): Promise<Frame[]> {
    return pollUntil(
      () => this.events(),
      (events) => events.length >= count,
      {
        what,
        timeoutMs: 20_000,
      },
    );
  }

  async close(): Promise<void> {
    if (this.closed) return;
    const closing = new Promise<void>((resolve) => this.socket.once('close', () => resolve()));
    this.socket.close(1000, 'done');
    await closing;
  }
}

async function refusal(connecting: Promise<Listener>): Promise<HandshakeRefused> {
  const outcome = await connecting.then(
    async (listener) => {
      await listener.close();
      return new Error('the handshake succeeded');
    },
    (error: unknown) => error,
  );
  if (!(outcome instanceof HandshakeRefused)) throw outcome;
  return outcome;
}

/** `ahasend webhooks listen` against the platform: platform notes 1.12. */
describe('webhook stream (issue 15)', () => {
  const payloads = new WebhookPayloadValidator(webhooksContractFile());
  let session: AccountSession;
  let key: string;
  let domain: DomainRecord;
  const listeners: Listener[] = [];

  beforeAll(async () => {
    session = await createAccountSession();
    key = session.created.api_key.secret_key;
    domain = await createVerifiedDomain(session);
  }, 60_000);

  afterEach(async () => {
    await Promise.all(listeners.splice(0).map((listener) => listener.close()));
  });

  afterAll(() => closeSessions());

  async function open(webhookId?: string): Promise<StreamOpened> {
    const query = webhookId ? `?webhook_id=${webhookId}` : '';
    const response = await session.api.post<StreamOpened>(
      session.path(`/webhooks/stream${query}`),
      undefined,
      BEYOND_CONTRACT,
    );
    expect(response.status).toBe(200);
    return response.body;
  }

  async function listen(opened: StreamOpened, force = false): Promise<Listener> {
    const listener = await Listener.connect(opened.ws_url, key, force);
    listeners.push(listener);
    return listener;
  }

  async function trigger(webhookId: string, events: string[]): Promise<void> {
    const response = await session.api.post(
      session.path(`/webhooks/${webhookId}/trigger`),
      { events },
      BEYOND_CONTRACT,
    );
    expect(response.status).toBe(202);
  }

  /** The payload of each event frame conforms to webhooks.yaml and names the webhook. */
  function expectValidPayloads(frames: Frame[], webhookId: string): void {
    for (const frame of frames) {
      const payload = frame.event?.data;
      expect(payload?.webhook_id).toBe(webhookId);
      expect(frame.event?.type).toBe(payload?.type);
      expect(frame.event?.stream_id).toBe(webhookId);
      expect(frame.event?.account_id).toBe(session.accountId);
      expect(frame.event?.metadata['webhook-id']).toEqual(expect.any(String) as unknown);
      expect(payloads.violations(payload?.type as WebhookPayloadType, payload)).toEqual([]);
    }
  }

  it('streams a temporary webhook’s events of mail sent through the API, with pings', async () => {
    const opened = await open();
    expect(opened.ws_url).toMatch(/^wss:\/\//);
    const listed = await session.api.get<{ data: WebhookRecord[] }>(session.path('/webhooks'));
    expect(listed.body.data.map((webhook) => webhook.id)).not.toContain(opened.webhook_id);

    const listener = await listen(opened);
    await pollUntil(
      () => listener.frames,
      (frames) => frames.length > 0,
      { what: 'the connected frame' },
    );
    expect(listener.frames[0]).toMatchObject({
      type: 'connected',
      session_id: expect.any(String) as unknown,
      stream: 'webhooks',
      timestamp: expect.any(Number) as unknown,
    });
    const sent = await session.api.post(session.path('/messages'), {
      from: { email: `app@${domain.domain}` },
      recipients: [{ email: 'stream@example.net' }],
      subject: 'Streamed',
      text_content: 'Hello',
    });
    expect(sent.status).toBe(202);
    const events = await pollUntil(
      () => listener.events(),
      (frames) => frames.some((frame) => frame.event?.type === 'message.delivered'),
      { what: 'message.delivered on the stream', timeoutMs: 30_000 },
    );
    expect(events.every((frame) => frame.type === 'event')).toBe(true);
    expectValidPayloads(events, opened.webhook_id);
    await pollUntil(
      () => listener.pings,
      (pings) => pings > 0,
      { what: 'a ping' },
    );
  }, 60_000);

  it('refuses a second listener with 409, replaces the first with force_reconnect', async () => {
    const opened = await open();
    const first = await listen(opened);
    const refused = await refusal(Listener.connect(opened.ws_url, key));
    expect(refused.status).toBe(409);
    expect(JSON.parse(refused.body)).toEqual({ message: expect.any(String) as unknown });

    const second = await listen(opened, true);
    await pollUntil(
      () => first.closed,
      (closed) => closed !== undefined,
      { what: 'the replaced listener closed' },
    );
    expect(first.closed?.code).toBe(4000);
    expect(first.closed?.reason).not.toBe('');
    await trigger(opened.webhook_id, ['message.opened']);
    const events = await second.until(1, 'the triggered event on the new listener');
    expect(events.map((frame) => frame.event?.data.type)).toEqual(['message.opened']);
    expectValidPayloads(events, opened.webhook_id);
    expect(first.events()).toEqual([]);
  }, 30_000);

  it('holds one listener per webhook over every gateway replica', async () => {
    const replica = await startGatewayReplica('gateway-stream-2', {});
    try {
      const opened = await open();
      const onReplica = new URL(opened.ws_url);
      onReplica.host = `127.0.0.1:${replica.port}`;
      const first = await listen(opened);
      expect((await refusal(Listener.connect(onReplica.href, key))).status).toBe(409);
      const second = await Listener.connect(onReplica.href, key, true);
      listeners.push(second);
      await pollUntil(
        () => first.closed,
        (closed) => closed !== undefined,
        { what: 'the listener on the other replica closed' },
      );
      expect(first.closed?.code).toBe(4000);
      await trigger(opened.webhook_id, ['suppression.created']);
      const events = await second.until(1, 'the event on the replica');
      expectValidPayloads(events, opened.webhook_id);
      await second.close();
    } finally {
      await replica.stop();
    }
  }, 60_000);

  it('replays what was produced while nobody listened, in order, then streams live', async () => {
    const opened = await open();
    const first = await listen(opened);
    await first.close();
    const buffered = ['message.opened', 'message.clicked', 'message.bounced'];
    for (const type of buffered) await trigger(opened.webhook_id, [type]);

    // The gateway detaches the closed listener asynchronously: until then the handshake answers 409.
    const listener = await pollUntil(
      () => listen(opened),
      () => true,
      { what: 'the stream free again' },
    );
    const replayed = await listener.until(3, 'the replayed events');
    expect(replayed.map((frame) => [frame.type, frame.event?.data.type])).toEqual(
      buffered.map((type) => ['replay', type]),
    );
    expectValidPayloads(replayed, opened.webhook_id);
    await trigger(opened.webhook_id, ['domain.dns_error']);
    const all = await listener.until(4, 'the live event after the replay');
    expect(all[3]).toMatchObject({ type: 'event', event: { type: 'domain.dns_error' } });
  }, 30_000);

  it('copies an existing webhook’s events to the stream while its endpoint still gets them', async () => {
    const receiver = await CheckedWebhookReceiver.start();
    try {
      const created = await session.api.post<CreatedWebhookRecord>(session.path('/webhooks'), {
        name: 'streamed',
        url: receiver.url('streamed'),
        scope: 'global',
        on_delivered: true,
      });
      expect(created.status).toBe(201);
      receiver.serve('streamed', created.body);
      const opened = await open(created.body.id);
      expect(opened.webhook_id).toBe(created.body.id);
      const listener = await listen(opened);
      await trigger(created.body.id, ['message.delivered']);
      const [event] = await listener.until(1, 'the event on the stream');
      expectValidPayloads([event], created.body.id);
      await pollUntil(
        () => receiver.eventsAt('streamed'),
        (calls) => calls.length === 1,
        { what: 'the endpoint call', timeoutMs: 20_000 },
      );
      expect(receiver.eventsAt('streamed')[0]?.messageId).toBe(
        event?.event?.metadata['webhook-id'],
      );
      expect(receiver.problems()).toEqual([]);
    } finally {
      await receiver.close();
    }
  }, 30_000);

  it('answers 400, 401, 403 and 404 with a message, plainly', async () => {
    const opened = await open();
    const stranger = await createAccountSession();
    const bad = [
      await refusal(Listener.connect(opened.ws_url, 'aha-sk-not-a-key')),
      await refusal(Listener.connect(opened.ws_url, stranger.created.api_key.secret_key)),
    ];
    expect(bad.map((refused) => refused.status)).toEqual([401, 401]);
    for (const refused of bad)
      expect(JSON.parse(refused.body)).toEqual({ message: expect.any(String) as unknown });
    const unknown = opened.ws_url.replace(
      opened.webhook_id,
      '6f1c4d0e-8a1b-4c2d-9e3f-0a1b2c3d4e5f',
    );
    expect((await refusal(Listener.connect(unknown, key))).status).toBe(404);

    const badQuery = await session.api.post<{ message: string }>(
      session.path('/webhooks/stream?webhook_id=nope'),
      undefined,
      BEYOND_CONTRACT,
    );
    expect(badQuery.status).toBe(400);
    expect(badQuery.body.message).toEqual(expect.any(String) as unknown);
    const missing = await session.api.post(
      session.path('/webhooks/stream?webhook_id=6f1c4d0e-8a1b-4c2d-9e3f-0a1b2c3d4e5f'),
      undefined,
      BEYOND_CONTRACT,
    );
    expect(missing.status).toBe(404);
    const scoped = await createKey(session, [`webhooks:write:{${domain.domain}}`]);
    const temporaryRefused = await scoped.client.post(
      session.path('/webhooks/stream'),
      undefined,
      BEYOND_CONTRACT,
    );
    expect(temporaryRefused.status).toBe(403);
    const readOnlyOfDomain = await createKey(session, [`webhooks:read:{${domain.domain}}`]);
    const sendOnly = await createKey(session, ['messages:send:all']);
    // A domain-scoped key does not see a global webhook (404); a key without webhooks:read: 403.
    const refusedScopes = [
      await refusal(Listener.connect(opened.ws_url, readOnlyOfDomain.client.apiKey)),
      await refusal(Listener.connect(opened.ws_url, sendOnly.client.apiKey)),
    ];
    expect(refusedScopes.map((refused) => refused.status)).toEqual([404, 403]);
  }, 30_000);
});
