import { randomUUID } from 'node:crypto';

import { EVENTS_STREAM } from '@envoi/contracts-core';
import {
  type BounceMailEvent,
  type CreatedRouteRecord,
  type FeedbackMailEvent,
  INBOUND_SPOOL_BUCKET,
  InboundStreamSubjects,
  type RoutedMailEvent,
} from '@envoi/contracts-routes';
import { type CreatedWebhookRecord, WEBHOOK_EVENT_FLAGS } from '@envoi/contracts-webhooks';
import { pollUntil } from '@envoi/shared-testing';
import { connect, type NatsConnection } from 'nats';

import { closeSessions, createAccountSession } from '../support/account-session';
import { createDomainName } from '../support/domains';
import { e2eEnvironment } from '../support/environment';
import { deliverToMx as deliver } from '../support/mx-client';
import { CheckedWebhookReceiver } from '../support/webhook-receiver';

/** A route URL of the specs that only check what the MX takes. */
const HOOK = 'https://hooks.example.net/inbound';
/** The platform's bounce host: the e2e platform keeps the default RETURN_PATH_TARGET. */
const BOUNCE_DOMAIN = 'bounces.envoi.test';

function dsn(messageUuid: string): string {
  return [
    'From: Mail Delivery System <MAILER-DAEMON@mx.remote.example>',
    `To: bounce+${messageUuid}@${BOUNCE_DOMAIN}`,
    'Subject: Undelivered Mail Returned to Sender',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=delivery-status; boundary="b"',
    '',
    '--b',
    'Content-Type: message/delivery-status',
    '',
    'Reporting-MTA: dns; mx.remote.example',
    '',
    'Final-Recipient: rfc822; gone@remote.example',
    'Action: failed',
    'Status: 5.1.1',
    '--b--',
    '',
  ].join('\r\n');
}

function arf(): string {
  return [
    'From: feedback@fbl.remote.example',
    'Subject: complaint about message',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=feedback-report; boundary="f"',
    '',
    '--f',
    'Content-Type: message/feedback-report',
    '',
    'Feedback-Type: abuse',
    'Version: 1',
    '--f--',
    '',
  ].join('\r\n');
}

/**
 * Issue 17 end to end: real SMTP clients deliver to the MX of the whole platform over STARTTLS;
 * what they hand over is in the inbound spool and on the events stream, named by the inbound id
 * of the 250. Other destinations are refused at RCPT.
 */
describe('MX (inbound mail)', () => {
  let nats: NatsConnection;

  beforeAll(async () => {
    nats = await connect({ servers: e2eEnvironment().natsUrl });
  });
  afterAll(async () => {
    await nats?.close();
    await closeSessions();
  });

  /** The latest event of the subject, once it is the one of `inboundId`. */
  async function eventOf<E extends { data: { inbound_id: string } }>(
    subject: string,
    inboundId: string,
  ): Promise<E> {
    const jsm = await nats.jetstreamManager();
    return pollUntil(
      async () => {
        const message = await jsm.streams.getMessage(EVENTS_STREAM, { last_by_subj: subject });
        return JSON.parse(new TextDecoder().decode(message.data)) as E;
      },
      (event) => event.data.inbound_id === inboundId,
      { timeoutMs: 10_000, intervalMs: 100, what: `the ${subject} event of ${inboundId}` },
    );
  }

  async function spooled(name: string): Promise<string | undefined> {
    const bytes = await (await nats.jetstream().views.os(INBOUND_SPOOL_BUCKET)).getBlob(name);
    return bytes ? Buffer.from(bytes).toString('latin1') : undefined;
  }

  for (const client of ['nodemailer', 'swaks'] as const) {
    it(`${client}: a DSN to a VERP bounce address is spooled whole and published with the message uuid`, async () => {
      const messageUuid = randomUUID();
      const raw = dsn(messageUuid);
      const address = `bounce+${messageUuid}@${BOUNCE_DOMAIN}`;
      const inboundId = await deliver(client, address, raw);
      const event = await eventOf<BounceMailEvent>(InboundStreamSubjects.bounce.name, inboundId);
      expect(event.data).toMatchObject({
        envelope_from: '',
        tls: true,
        recipients: [{ address, message_uuid: messageUuid }],
      });
      expect(await spooled(event.data.spool.name)).toBe(raw);
    });

    it(`${client}: an ARF report to the feedback address is published as feedback`, async () => {
      const { feedback_address } = e2eEnvironment().smtpMx;
      const raw = arf();
      const inboundId = await deliver(client, feedback_address, raw);
      const event = await eventOf<FeedbackMailEvent>(
        InboundStreamSubjects.feedback.name,
        inboundId,
      );
      expect(event.data.recipient).toBe(feedback_address);
      expect(await spooled(event.data.spool.name)).toBe(raw);
    });
  }

  it("routes a customer's address through its route (250, routed event), 550 5.1.1 for an unknown local part", async () => {
    const session = await createAccountSession();
    const domain = await createDomainName(session);
    const created = await session.api.post<CreatedRouteRecord>(session.path('/routes'), {
      name: 'support',
      url: HOOK,
      recipient: `support@${domain}`,
    });
    expect(created.status).toBe(201);
    const message = `From: Ann <ann@remote.example>\r\nTo: support@${domain}\r\nSubject: help\r\n\r\nHello\r\n`;

    for (const client of ['nodemailer', 'swaks'] as const) {
      const inboundId = await deliver(client, `Support@${domain}`, message, 'ann@remote.example');
      const event = await eventOf<RoutedMailEvent>(InboundStreamSubjects.routed.name, inboundId);
      expect(event.data).toMatchObject({
        account_id: session.accountId,
        envelope_from: 'ann@remote.example',
        recipients: [{ address: `support@${domain}`, route_ids: [created.body.id] }],
      });
      // A small routed message travels in its event: no spool is stored for it.
      expect(Buffer.from(event.data.raw ?? '', 'base64').toString()).toBe(message);
      expect(event.data.spool).toBeUndefined();
    }
    await expect(
      deliver('swaks', `sales@${domain}`, message, 'ann@remote.example'),
    ).rejects.toThrow(/550 5\.1\.1 /);
    await expect(
      deliver('swaks', `support@unrouted-${randomUUID()}.example`, message, 'ann@remote.example'),
    ).rejects.toThrow(/550 5\.7\.1 Relaying denied/);
  });

  it("fires message.reception for a routed recipient to the webhooks scoped to the recipient's domain", async () => {
    const receiver = await CheckedWebhookReceiver.start();
    try {
      const session = await createAccountSession();
      const domain = await createDomainName(session);
      const route = await session.api.post(session.path('/routes'), {
        name: 'tickets',
        url: 'https://hooks.example.net/tickets',
        recipient: `ticket-*@${domain}`,
      });
      expect(route.status).toBe(201);
      const webhook = await session.api.post<CreatedWebhookRecord>(session.path('/webhooks'), {
        name: 'inbound',
        url: receiver.url('inbound'),
        scope: 'scoped',
        domains: [domain],
        ...Object.fromEntries(WEBHOOK_EVENT_FLAGS.map((flag) => [flag, true])),
      });
      expect(webhook.status).toBe(201);
      receiver.serve('inbound', webhook.body);

      const to = `ticket-42@${domain}`;
      const message = `From: Ann <ann@remote.example>\r\nTo: ${to}\r\nSubject: my ticket\r\nMessage-ID: <t42@remote.example>\r\n\r\nHello\r\n`;
      const inboundId = await deliver('nodemailer', to, message, 'bounces@remote.example');
      const [reception] = await pollUntil(
        () => receiver.eventsAt('inbound'),
        (calls) => calls.length > 0,
        { timeoutMs: 30_000, intervalMs: 200, what: 'the message.reception of the inbound mail' },
      );
      expect(reception?.problems).toEqual([]);
      expect(reception?.payload).toMatchObject({
        type: 'message.reception',
        data: {
          account_id: session.accountId,
          event: 'on_reception',
          from: 'ann@remote.example',
          recipient: to,
          subject: 'my ticket',
          message_id_header: '<t42@remote.example>',
          id: inboundId,
        },
      });
    } finally {
      await receiver.close();
    }
  });

  it('takes a route change at RCPT within seconds, not at the cache TTL (each MX replica caches route sets per domain)', async () => {
    /**
     * A change the MX missed would be taken only once its cached route set expires
     * (SMTP_MX_ROUTE_CACHE_TTL_MS, 30 s here); the broadcast takes well under a second on an idle
     * machine, and a sixth of the TTL leaves a loaded one room.
     */
    const takenWithinMs = 5_000;
    const session = await createAccountSession();
    const domain = await createDomainName(session);
    const message = `From: Ann <ann@remote.example>\r\nTo: support@${domain}\r\nSubject: hi\r\n\r\nHi\r\n`;
    /** Ms from `since` to the start of the first delivery to `local` answered as `reply` says. */
    const answeredAfter = async (local: string, reply: RegExp, since: number) => {
      const attempt = await pollUntil(
        async () => {
          const startedAt = Date.now();
          const answer = await deliver('nodemailer', `${local}@${domain}`, message, 'a@x.example')
            .then(() => '250')
            .catch((error: unknown) => String(error));
          return { startedAt, answer };
        },
        ({ answer }) => reply.test(answer),
        { timeoutMs: 10_000, intervalMs: 50, what: `${reply} for ${local}@${domain}` },
      );
      return attempt.startedAt - since;
    };
    const routes = session.path('/routes');
    const route = (recipient: string) =>
      session.api.post<CreatedRouteRecord>(routes, { name: recipient, url: HOOK, recipient });

    const support = await route(`support@${domain}`);
    expect(support.status).toBe(201);
    expect(await answeredAfter('support', /^250$/, Date.now())).toBeLessThan(takenWithinMs);
    // The domain's route set is cached now, without tickets.
    expect(await answeredAfter('ticket-1', /550 5\.1\.1 /, Date.now())).toBeLessThan(takenWithinMs);

    const tickets = await route(`ticket-*@${domain}`);
    expect(tickets.status).toBe(201);
    expect(await answeredAfter('ticket-2', /^250$/, Date.now())).toBeLessThan(takenWithinMs);

    const disabledAt = Date.now();
    const disabled = await session.api.put(session.path(`/routes/${support.body.id}`), {
      enabled: false,
    });
    expect(disabled.status).toBe(200);
    expect(await answeredAfter('support', /550 5\.1\.1 /, disabledAt)).toBeLessThan(takenWithinMs);

    const deletedAt = Date.now();
    const deleted = await session.api.delete(session.path(`/routes/${tickets.body.id}`));
    expect(deleted.status).toBe(200);
    expect(await answeredAfter('ticket-3', /550 5\.7\.1 /, deletedAt)).toBeLessThan(takenWithinMs);
  });

  it('refuses to relay a %-hack with 550 5.7.1 (swaks)', async () => {
    await expect(deliver('swaks', `user%victim.example@${BOUNCE_DOMAIN}`, arf())).rejects.toThrow(
      /550 5\.7\.1 Relaying denied/,
    );
  });
});
