import type { DomainRecord } from '@envoi/contracts-domains';
import type { CreatedWebhookRecord, WebhookRecord } from '@envoi/contracts-webhooks';
import { pollUntil, type WebhookPayloadType, WebhookPayloadValidator } from '@envoi/shared-testing';

import { type AccountSession, createAccountSession, createKey } from '../support/account-session';
import type { RequestOptions } from '../support/api-client';
import { webhooksContractFile } from '../support/contract/contract-files';
import { createVerifiedDomain } from '../support/domains';
import { startGatewayReplica } from '../support/gateway-replica';
import { refusal, type StreamFrame, type StreamListener } from '../support/stream-listener';
import { useStreamSession } from '../support/stream-session';
import { CheckedWebhookReceiver } from '../support/webhook-receiver';

// POST …/webhooks/stream and the WebSocket are beyond openapi.yaml (platform notes 1.12).
const BEYOND_CONTRACT: RequestOptions = { contract: 'skip' };

interface StreamOpened {
  webhook_id: string;
  ws_url: string;
}

/** A webhook stream's event data: the payload an endpoint receives. */
interface WebhookEventData {
  type: string;
  webhook_id: string;
  timestamp: string;
  data: Record<string, unknown>;
}

type Listener = StreamListener<WebhookEventData>;
type Frame = StreamFrame<WebhookEventData>;

/** `ahasend webhooks listen` against the platform: platform notes 1.12. */
describe('webhook stream (issue 15)', () => {
  const payloads = new WebhookPayloadValidator(webhooksContractFile());
  const streams = useStreamSession<WebhookEventData>();
  let session: AccountSession;
  let key: string;
  let domain: DomainRecord;

  beforeAll(async () => {
    ({ session, key } = streams());
    domain = await createVerifiedDomain(session);
  }, 60_000);

  const open = (webhookId?: string): Promise<StreamOpened> =>
    streams().open('webhooks', webhookId ? `?webhook_id=${webhookId}` : '');
  const listen = (opened: StreamOpened, force = false): Promise<Listener> =>
    streams().listen(opened.ws_url, force);
  const connect = (wsUrl: string, withKey: string, force = false): Promise<Listener> =>
    streams().connect(wsUrl, withKey, force);

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
    expect(await listener.firstFrame()).toMatchObject({
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
    await listener.untilPinged();
  }, 60_000);

  it('refuses a second listener with 409, replaces the first with force_reconnect', async () => {
    const opened = await open();
    const first = await listen(opened);
    const refused = await refusal(connect(opened.ws_url, key));
    expect(refused.status).toBe(409);
    expect(JSON.parse(refused.body)).toEqual({ message: expect.any(String) as unknown });

    const second = await listen(opened, true);
    expect((await first.untilClosed('the replaced listener closed')).code).toBe(4000);
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
      expect((await refusal(connect(onReplica.href, key))).status).toBe(409);
      const second = await streams().listen(onReplica.href, true);
      expect((await first.untilClosed('the listener on the other replica closed')).code).toBe(4000);
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
      await refusal(connect(opened.ws_url, 'aha-sk-not-a-key')),
      await refusal(connect(opened.ws_url, stranger.created.api_key.secret_key)),
    ];
    expect(bad.map((refused) => refused.status)).toEqual([401, 401]);
    for (const refused of bad)
      expect(JSON.parse(refused.body)).toEqual({ message: expect.any(String) as unknown });
    const unknown = opened.ws_url.replace(
      opened.webhook_id,
      '6f1c4d0e-8a1b-4c2d-9e3f-0a1b2c3d4e5f',
    );
    expect((await refusal(connect(unknown, key))).status).toBe(404);

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
      await refusal(connect(opened.ws_url, readOnlyOfDomain.client.apiKey)),
      await refusal(connect(opened.ws_url, sendOnly.client.apiKey)),
    ];
    expect(refusedScopes.map((refused) => refused.status)).toEqual([404, 403]);
  }, 30_000);
});
