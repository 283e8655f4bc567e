import { randomUUID } from 'node:crypto';

import type { CreatedRouteRecord, RouteRecord } from '@envoi/contracts-routes';
import { pollUntil } from '@envoi/shared-testing';
import MailComposer from 'nodemailer/lib/mail-composer';

import { type AccountSession, createAccountSession, createKey } from '../support/account-session';
import type { RequestOptions } from '../support/api-client';
import { createDomainName } from '../support/domains';
import { deliverToMx, type MxClientName } from '../support/mx-client';
import { refusal, type StreamFrame, type StreamListener } from '../support/stream-listener';
import { useStreamSession } from '../support/stream-session';
import { CheckedWebhookReceiver } from '../support/webhook-receiver';

// POST …/routes/stream and the WebSocket are beyond openapi.yaml (platform notes 1.12).
const BEYOND_CONTRACT: RequestOptions = { contract: 'skip' };
const SENDER = 'ann@remote.example';
const INVOICE = 'total: 42, due in 30 days';

interface StreamOpened {
  route_id: string;
  ws_url: string;
}

/** A route stream's event data: the message.routing payload, attachments without their bytes. */
interface RoutingEventData {
  type: string;
  route_id: string;
  timestamp: string;
  data: {
    id: string;
    to: string;
    subject: string;
    plain_body: string;
    attachments?: Array<Record<string, unknown>>;
  };
}

type Listener = StreamListener<RoutingEventData>;
type Frame = StreamFrame<RoutingEventData>;

async function mailWithInvoice(to: string[], subject: string): Promise<string> {
  const built = await new MailComposer({
    from: `Ann <${SENDER}>`,
    to,
    subject,
    text: 'The invoice is attached.',
    attachments: [{ filename: 'invoice.txt', content: INVOICE, contentType: 'text/plain' }],
  })
    .compile()
    .build();
  return built.toString('utf8');
}

/** `ahasend routes listen` against the platform: platform notes 1.12, mail through the MX. */
describe('route stream (issue 17)', () => {
  const streams = useStreamSession<RoutingEventData>();
  let session: AccountSession;
  let key: string;
  let domain: string;
  let receiver: CheckedWebhookReceiver;

  beforeAll(async () => {
    ({ session, key } = streams());
    domain = await createDomainName(session);
    receiver = await CheckedWebhookReceiver.start();
  }, 60_000);
  afterAll(() => receiver?.close());

  const open = (query: string): Promise<StreamOpened> => streams().open('routes', `?${query}`);
  const listen = (opened: StreamOpened, force = false): Promise<Listener> =>
    streams().listen(opened.ws_url, force);
  const connect = (wsUrl: string, withKey: string): Promise<Listener> =>
    streams().connect(wsUrl, withKey);

  async function send(client: MxClientName, to: string | string[], subject: string) {
    const recipients = ([] as string[]).concat(to);
    return deliverToMx(client, recipients, await mailWithInvoice(recipients, subject), SENDER);
  }

  /** A route with a URL on the receiver, at `endpoint`. */
  async function createUrlRoute(endpoint: string, recipient: string): Promise<CreatedRouteRecord> {
    const created = await session.api.post<CreatedRouteRecord>(session.path('/routes'), {
      name: endpoint,
      url: receiver.url(endpoint),
      recipient,
    });
    expect(created.status).toBe(201);
    receiver.serve(endpoint, { id: created.body.id, secret: created.body.secret });
    return created.body;
  }

  function callsAt(endpoint: string, count: number): Promise<unknown[]> {
    return pollUntil(
      () => Promise.resolve(receiver.callsTo(endpoint)),
      (calls) => calls.length === count,
      { what: `${count} POSTs to ${endpoint}`, timeoutMs: 30_000 },
    );
  }

  /** Each event frame is a message.routing of the route, of this account, with no bytes. */
  function expectRoutingEvents(frames: Frame[], routeId: string): void {
    for (const frame of frames) {
      expect(frame.stream).toBe('routes');
      expect(frame.event).toMatchObject({
        type: 'message.routing',
        stream_id: routeId,
        account_id: session.accountId,
        data: { type: 'message.routing', route_id: routeId },
      });
      expect(frame.event?.metadata['webhook-id']).toEqual(expect.any(String) as unknown);
      expect(JSON.stringify(frame)).not.toContain(Buffer.from(INVOICE).toString('base64'));
    }
  }

  it('streams mail for a temporary route to its pattern through the MX, attachments as metadata, with pings', async () => {
    const opened = await open(`recipient=${encodeURIComponent(`stream-*@${domain}`)}`);
    expect(opened.ws_url).toMatch(/^wss:\/\/.*\/routes\/.*\/listen$/);
    const listed = await session.api.get<{ data: RouteRecord[] }>(session.path('/routes'));
    expect(listed.body.data.map((route) => route.id)).not.toContain(opened.route_id);

    const listener = await listen(opened);
    expect(await listener.firstFrame()).toMatchObject({
      type: 'connected',
      session_id: expect.any(String) as unknown,
      stream: 'routes',
    });
    const subject = `Invoice ${randomUUID()}`;
    const inboundId = await send('swaks', `stream-billing@${domain}`, subject);
    const [frame] = await listener.until(1, 'the routed mail on the stream', 30_000);
    expect(frame?.type).toBe('event');
    expectRoutingEvents([frame], opened.route_id);
    expect(frame?.event?.data.data).toMatchObject({
      id: inboundId,
      to: `stream-billing@${domain}`,
      subject,
      attachments: [
        {
          filename: 'invoice.txt',
          content_type: 'text/plain',
          size: Buffer.byteLength(INVOICE),
        },
      ],
    });
    expect(frame?.event?.data.data.attachments?.[0]).not.toHaveProperty('data');
    await listener.untilPinged();
  }, 60_000);

  it('refuses a second listener with 409, replaces the first with force_reconnect', async () => {
    const opened = await open(`recipient=${encodeURIComponent(`force@${domain}`)}`);
    const first = await listen(opened);
    const refused = await refusal(connect(opened.ws_url, key));
    expect(refused.status).toBe(409);
    expect(JSON.parse(refused.body)).toEqual({ message: expect.any(String) as unknown });

    const second = await listen(opened, true);
    expect((await first.untilClosed('the replaced listener closed')).code).toBe(4000);
    await send('nodemailer', `force@${domain}`, 'to the new listener');
    const events = await second.until(1, 'the mail on the new listener', 30_000);
    expectRoutingEvents(events, opened.route_id);
    expect(first.events()).toEqual([]);
  }, 60_000);

  it('replays mail routed while nobody listened, in order, then streams live', async () => {
    const opened = await open(`recipient=${encodeURIComponent(`replay@${domain}`)}`);
    const first = await listen(opened);
    await first.close();
    // Each message also goes to a route with a URL: its POST tells the message was taken, and so
    // buffered (the routes service buffers a message before it plans its calls).
    const probe = `probe-${randomUUID()}`;
    await createUrlRoute(probe, `replay-probe@${domain}`);
    const subjects = ['one', 'two'].map((name) => `${name} ${randomUUID()}`);
    for (const [index, subject] of subjects.entries()) {
      await send('swaks', [`replay@${domain}`, `replay-probe@${domain}`], subject);
      // One at a time: the order they are buffered in is the order they were taken in.
      await callsAt(probe, index + 1);
    }

    // The gateway detaches the closed listener asynchronously: until then the handshake answers 409.
    const listener = await pollUntil(
      () => listen(opened),
      () => true,
      { what: 'the stream free again' },
    );
    const replayed = await listener.until(2, 'the replayed mail', 30_000);
    expect(replayed.map((frame) => [frame.type, frame.event?.data.data.subject])).toEqual(
      subjects.map((subject) => ['replay', subject]),
    );
    expectRoutingEvents(replayed, opened.route_id);
    const live = `live ${randomUUID()}`;
    await send('nodemailer', `replay@${domain}`, live);
    const all = await listener.until(3, 'the live mail after the replay', 30_000);
    expect(all[2]).toMatchObject({ type: 'event', event: { data: { data: { subject: live } } } });
  }, 60_000);

  it('streams an existing route opened with route_id while its URL still gets the POST', async () => {
    const endpoint = `existing-${randomUUID()}`;
    const created = await createUrlRoute(endpoint, `existing@${domain}`);
    const opened = await open(`route_id=${created.id}`);
    expect(opened.route_id).toBe(created.id);
    const listener = await listen(opened);
    await send('swaks', `existing@${domain}`, 'both ways');
    const events = await listener.until(1, 'the mail on the stream', 30_000);
    expectRoutingEvents(events, created.id);
    await callsAt(endpoint, 1);
    expect(receiver.problems()).toEqual([]);
  }, 60_000);

  it('answers 400, 401, 403 and 404 with a message, plainly', async () => {
    const post = (query: string) =>
      session.api.post<{ message: string }>(
        session.path(`/routes/stream${query}`),
        undefined,
        BEYOND_CONTRACT,
      );
    const routeId = '6f1c4d0e-8a1b-4c2d-9e3f-0a1b2c3d4e5f';
    const bad = [
      await post(''),
      await post(`?route_id=${routeId}&recipient=a@${domain}`),
      await post('?route_id=nope'),
      await post(`?recipient=a@${domain}&other=1`),
      await post('?recipient=no-domain'),
      await post('?recipient=a@unknown-domain.example'),
    ];
    expect(bad.map((response) => response.status)).toEqual([400, 400, 400, 400, 400, 400]);
    for (const response of bad)
      expect(response.body).toEqual({ message: expect.any(String) as unknown });
    expect((await post(`?route_id=${routeId}`)).status).toBe(404);

    const opened = await open(`recipient=${encodeURIComponent(`refusals@${domain}`)}`);
    const stranger = await createAccountSession();
    const unauthenticated = [
      await refusal(connect(opened.ws_url, 'aha-sk-not-a-key')),
      await refusal(connect(opened.ws_url, stranger.created.api_key.secret_key)),
    ];
    expect(unauthenticated.map((refused) => refused.status)).toEqual([401, 401]);
    const unknown = opened.ws_url.replace(opened.route_id, routeId);
    expect((await refusal(connect(unknown, key))).status).toBe(404);

    // Listening needs routes:read of the route's domain; opening needs routes:write of it.
    const reader = await createKey(session, [`routes:read:{${domain}}`]);
    const otherReader = await createKey(session, [
      `routes:read:{${await createDomainName(session)}}`,
    ]);
    const sender = await createKey(session, ['messages:send:all']);
    await (await streams().listen(opened.ws_url, false, reader.client.apiKey)).close();
    const refusedScopes = [
      await refusal(connect(opened.ws_url, otherReader.client.apiKey)),
      await refusal(connect(opened.ws_url, sender.client.apiKey)),
    ];
    expect(refusedScopes.map((refused) => refused.status)).toEqual([404, 403]);
    const openedByReader = await reader.client.post(
      session.path(`/routes/stream?recipient=${encodeURIComponent(`r@${domain}`)}`),
      undefined,
      BEYOND_CONTRACT,
    );
    expect(openedByReader.status).toBe(403);
  }, 60_000);
});
