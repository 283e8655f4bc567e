import { randomUUID } from 'node:crypto';

import type {
  CreatedRouteRecord,
  CreateRouteBody,
  MessageRoutingData,
  RouteRecord,
} from '@envoi/contracts-routes';
import { findFreePort, pollUntil } from '@envoi/shared-testing';
import MailComposer from 'nodemailer/lib/mail-composer';

import {
  type AccountSession,
  closeSessions,
  createAccountSession,
} from '../support/account-session';
import { createDomainName } from '../support/domains';
import { deliverToMx, type MxClientName } from '../support/mx-client';
import { OutagePlatform } from '../support/outage-platform';
import { type CheckedCall, CheckedWebhookReceiver } from '../support/webhook-receiver';

/** The e2e platform's ROUTE_TIMEOUT_MS (global-setup). */
const ROUTE_TIMEOUT_MS = 2_000;
const SENDER = 'ann@remote.example';
/** A 1×1 PNG. */
const PIXEL = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);
const GMAIL_REPLY = [
  "Thanks, that fixed it. I'll close the ticket.",
  '',
  'Best,',
  'Ann',
  '',
  'On Mon, May 6, 2024 at 1:15 PM Support Team <support@example.com> wrote:',
  '',
  '> Hi Ann,',
  '>',
  '> Could you try clearing the cache and signing in again?',
  '',
].join('\r\n');

function plainMessage(to: string, subject: string): string {
  return [
    `From: Ann <${SENDER}>`,
    `To: ${to}`,
    `Subject: ${subject}`,
    `Message-ID: <${randomUUID()}@remote.example>`,
    'Date: Mon, 06 May 2024 13:15:46 +0000',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Hello, I need help.',
    '',
  ].join('\r\n');
}

function dataOf(call: CheckedCall | undefined): MessageRoutingData {
  if (!call?.payload) throw new Error('no payload');
  return call.payload.data as unknown as MessageRoutingData;
}

async function composed(options: ConstructorParameters<typeof MailComposer>[0]): Promise<string> {
  const built = await new MailComposer(options).compile().build();
  return built.toString('utf8');
}

/**
 * Issue 17 end to end: real SMTP clients deliver to the MX of the whole platform; routes created
 * through the API POST message.routing to a loopback receiver that validates every payload
 * against webhooks.yaml and verifies its signature with `standardwebhooks` and the route secret.
 */
describe('inbound mail to routes (issue 17)', () => {
  let receiver: CheckedWebhookReceiver;
  let session: AccountSession;
  let domain: string;

  beforeAll(async () => {
    receiver = await CheckedWebhookReceiver.start();
    session = await createAccountSession();
    domain = await createDomainName(session);
  });
  afterEach(() => {
    expect(receiver.problems()).toEqual([]);
  });
  afterAll(async () => {
    await receiver?.close();
    await closeSessions();
  });

  async function createRoute(
    endpoint: string,
    body: Partial<CreateRouteBody> & { recipient: string },
  ): Promise<CreatedRouteRecord> {
    const created = await session.api.post<CreatedRouteRecord>(session.path('/routes'), {
      name: endpoint,
      url: receiver.url(endpoint),
      ...body,
    });
    expect(created.status).toBe(201);
    receiver.serve(endpoint, { id: created.body.id, secret: created.body.secret });
    return created.body;
  }

  async function routeOf(id: string): Promise<RouteRecord> {
    const read = await session.api.get<RouteRecord>(session.path(`/routes/${id}`));
    expect(read.status).toBe(200);
    return read.body;
  }

  function callsAt(endpoint: string, count: number): Promise<CheckedCall[]> {
    return pollUntil(
      () => Promise.resolve(receiver.callsTo(endpoint)),
      (calls) => calls.length >= count,
      { what: `${count} calls to ${endpoint}`, timeoutMs: 20_000, intervalMs: 50 },
    );
  }

  for (const client of ['swaks', 'nodemailer'] as const satisfies readonly MxClientName[]) {
    it(`${client}: one POST per recipient, or one per email with group_by_message_id`, async () => {
      const each = `each-${randomUUID()}`;
      const grouped = `grouped-${randomUUID()}`;
      const eachRoute = await createRoute(each, { recipient: `${client}-each-*` });
      const groupRoute = await createRoute(grouped, {
        recipient: `${client}-group-*`,
        group_by_message_id: true,
      });
      const eachTo = [`${client}-each-a@${domain}`, `${client}-each-b@${domain}`];
      const groupTo = [`${client}-group-a@${domain}`, `${client}-group-b@${domain}`];
      const subject = `Help ${randomUUID()}`;
      const inboundId = await deliverToMx(
        client,
        [...eachTo, ...groupTo],
        plainMessage([...eachTo, ...groupTo].join(', '), subject),
        SENDER,
      );

      const eachCalls = await callsAt(each, 2);
      const [groupCall] = await callsAt(grouped, 1);
      expect(eachCalls.map((call) => dataOf(call).to).sort()).toEqual(eachTo);
      for (const call of [...eachCalls, groupCall]) {
        expect(dataOf(call)).toMatchObject({
          id: inboundId,
          from: `Ann <${SENDER}>`,
          reply_to: SENDER,
          subject,
          plain_body: 'Hello, I need help.\n',
          reply_from_plain_body: '',
          attachments: [],
          bounce: false,
        });
        expect(dataOf(call)).not.toHaveProperty('headers');
      }
      expect(groupCall?.payload).toMatchObject({ route_id: groupRoute.id });
      expect(groupTo).toContain(dataOf(groupCall).to);
      await pollUntil(
        () => routeOf(eachRoute.id),
        (route) => route.success_count === 2,
        { what: 'the counters of the per-recipient route', timeoutMs: 10_000 },
      );
      expect(await routeOf(groupRoute.id)).toMatchObject({ success_count: 1, error_count: 0 });
      expect(receiver.callsTo(each)).toHaveLength(2);
      expect(receiver.callsTo(grouped)).toHaveLength(1);
    });
  }

  it('nodemailer: HTML with an attachment and an inline cid image; attachments and headers only with their flags', async () => {
    const full = `full-${randomUUID()}`;
    const bare = `bare-${randomUUID()}`;
    await createRoute(full, { recipient: 'full', attachments: true, headers: true });
    await createRoute(bare, { recipient: 'bare' });
    const subject = `Invoice ${randomUUID()}`;
    const raw = await composed({
      from: `Ann <${SENDER}>`,
      to: [`full@${domain}`, `bare@${domain}`],
      subject,
      text: 'The invoice is attached.',
      html: '<p>The invoice is attached.</p><img src="cid:logo@remote.example">',
      attachments: [
        { filename: 'invoice.txt', content: 'total: 42', contentType: 'text/plain' },
        {
          filename: 'logo.png',
          content: PIXEL,
          contentType: 'image/png',
          cid: 'logo@remote.example',
        },
      ],
    });
    await deliverToMx('nodemailer', [`full@${domain}`, `bare@${domain}`], raw, SENDER);

    const fullData = dataOf((await callsAt(full, 1))[0]);
    const bareData = dataOf((await callsAt(bare, 1))[0]);
    expect(fullData.html_body).toContain('src="cid:logo@remote.example"');
    expect(fullData.plain_body.trim()).toBe('The invoice is attached.');
    const attachments = [...(fullData.attachments ?? [])].sort((a, b) =>
      a.filename.localeCompare(b.filename),
    );
    expect(attachments).toEqual([
      {
        filename: 'invoice.txt',
        content_type: 'text/plain',
        content_id: '',
        disposition: 'attachment',
        data: Buffer.from('total: 42').toString('base64'),
      },
      {
        filename: 'logo.png',
        content_type: 'image/png',
        content_id: 'logo@remote.example',
        disposition: 'inline',
        data: PIXEL.toString('base64'),
      },
    ]);
    expect(fullData.headers).toMatchObject({ Subject: subject });
    expect(bareData).toMatchObject({ subject, attachments: [] });
    expect(bareData).not.toHaveProperty('headers');
  });

  it('swaks: a Gmail-style reply reaches a strip_replies route with the quote stripped', async () => {
    const endpoint = `replies-${randomUUID()}`;
    await createRoute(endpoint, { recipient: 'ticket-*', strip_replies: true });
    const message = [
      `From: Ann <${SENDER}>`,
      `To: ticket-42@${domain}`,
      'Subject: Re: Your ticket',
      'In-Reply-To: <ticket-42@support.example>',
      'Content-Type: text/plain; charset=utf-8',
      '',
      GMAIL_REPLY,
    ].join('\r\n');
    await deliverToMx('swaks', `ticket-42@${domain}`, message, SENDER);

    const data = dataOf((await callsAt(endpoint, 1))[0]);
    expect(data.reply_from_plain_body).toBe(
      "Thanks, that fixed it. I'll close the ticket.\n\nBest,\nAnn",
    );
    expect(data.plain_body).toContain('> Could you try clearing the cache');
    expect(data.in_reply_to).toBe('<ticket-42@support.example>');
  });

  it('retries a 503 then 200 and a hung call with the same webhook-id, counted in GET route', async () => {
    const flaky = `flaky-${randomUUID()}`;
    const hung = `hung-${randomUUID()}`;
    receiver.behave(flaky, (call) => (call === 0 ? 503 : 200));
    receiver.behave(hung, (call) => (call === 0 ? 'hang' : 200));
    const flakyRoute = await createRoute(flaky, { recipient: 'flaky' });
    const hungRoute = await createRoute(hung, { recipient: 'hung' });
    await deliverToMx(
      'swaks',
      [`flaky@${domain}`, `hung@${domain}`],
      plainMessage(`flaky@${domain}, hung@${domain}`, 'faults'),
      SENDER,
    );

    for (const [endpoint, route] of [
      [flaky, flakyRoute],
      [hung, hungRoute],
    ] as const) {
      const calls = await callsAt(endpoint, 2);
      expect(new Set(calls.map((call) => call.messageId)).size).toBe(1);
      expect(
        await pollUntil(
          () => routeOf(route.id),
          (record) => record.success_count === 1,
          { what: `the counters of ${endpoint}`, timeoutMs: 10_000 },
        ),
      ).toMatchObject({ error_count: 1, errors_since_last_success: 0, enabled: true });
    }
    const [first, second] = receiver.callsTo(hung);
    expect((second?.receivedAt ?? 0) - (first?.receivedAt ?? 0)).toBeGreaterThanOrEqual(
      ROUTE_TIMEOUT_MS - 100,
    );
  });

  it('retries a refused connection until the route URL answers', async () => {
    const closedPort = await findFreePort();
    const endpoint = `refused-${randomUUID()}`;
    const route = await createRoute(endpoint, { recipient: 'refused' });
    const moved = await session.api.put<RouteRecord>(session.path(`/routes/${route.id}`), {
      url: `http://127.0.0.1:${closedPort}/${endpoint}`,
    });
    expect(moved.status).toBe(200);
    await deliverToMx('swaks', `refused@${domain}`, plainMessage(`refused@${domain}`, 'x'), SENDER);

    await pollUntil(
      () => routeOf(route.id),
      (record) => record.error_count >= 2,
      { what: 'two refused calls counted', timeoutMs: 10_000 },
    );
    const back = await session.api.put<RouteRecord>(session.path(`/routes/${route.id}`), {
      url: receiver.url(endpoint),
    });
    expect(back.status).toBe(200);
    await callsAt(endpoint, 1);
    const settled = await pollUntil(
      () => routeOf(route.id),
      (record) => record.success_count === 1,
      { what: 'the retry delivered', timeoutMs: 20_000 },
    );
    expect(settled.errors_since_last_success).toBe(0);
    expect(receiver.callsTo(endpoint)).toHaveLength(1);
  });
});

/**
 * "A crash after 250 loses nothing": the smtp process is killed with SIGKILL as soon as the MX
 * answered 250 for each of a few messages, on a platform of its own; every one reaches the route.
 */
describe('inbound mail through a SIGKILL of the MX (issue 17)', () => {
  const MESSAGES = 3;
  let outage: OutagePlatform | undefined;
  let receiver: CheckedWebhookReceiver | undefined;

  beforeAll(async () => {
    receiver = await CheckedWebhookReceiver.start();
    outage = await OutagePlatform.start();
  }, 180_000);

  afterAll(async () => {
    await outage?.stop();
    await receiver?.close();
  }, 120_000);

  it('every message answered 250 reaches the route although smtp is killed right after each 250', async () => {
    if (!outage || !receiver) throw new Error('the outage platform did not start');
    const session = await outage.createAccountSession(`e2e-mx-crash-${randomUUID().slice(0, 8)}`);
    const domain = await createDomainName(session);
    const endpoint = `crash-${randomUUID()}`;
    const created = await session.api.post<CreatedRouteRecord>(session.path('/routes'), {
      name: 'crash',
      url: receiver.url(endpoint),
      recipient: 'support',
    });
    expect(created.status).toBe(201);
    receiver.serve(endpoint, { id: created.body.id, secret: created.body.secret });

    const accepted: string[] = [];
    for (let index = 0; index < MESSAGES; index += 1) {
      const inboundId = await deliverToMx(
        index % 2 === 0 ? 'swaks' : 'nodemailer',
        `support@${domain}`,
        plainMessage(`support@${domain}`, `crash ${index}`),
        SENDER,
        outage.platform.smtpMx,
      );
      accepted.push(inboundId);
      await outage.killService('smtp');
      await outage.startServiceAgain('smtp');
    }

    const calls = await pollUntil(
      () => Promise.resolve(receiver?.eventsAt(endpoint) ?? []),
      (events) => events.length >= MESSAGES,
      { what: `${MESSAGES} messages at the route`, timeoutMs: 30_000, intervalMs: 100 },
    );
    expect(calls.map((call) => dataOf(call).id).sort()).toEqual([...accepted].sort());
    expect(receiver.problems()).toEqual([]);
  }, 240_000);
});
