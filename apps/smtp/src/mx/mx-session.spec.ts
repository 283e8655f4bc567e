import { PassThrough } from 'node:stream';

import { CommonErrorCode } from '@envoi/contracts-core';
import {
  type BounceMailEvent,
  type InboundReceptionEvent,
  type InboundSpoolRef,
  type RecipientMatch,
  type RoutedMailEvent,
} from '@envoi/contracts-routes';
import { RpcError } from '@envoi/shared-nats';
import type { SMTPServerAddress, SMTPServerDataStream, SMTPServerSession } from 'smtp-server';

import { SmtpReply } from '../submission/replies';
import { mxContentLimits } from './content-check';
import { inboundEventId } from './inbound-events';
import type { InboundPublication } from './inbound-spool';
import { MxSession } from './mx-session';

const INBOUND_ID = '6f1d2c3b-4a59-4687-9a0b-1c2d3e4f5a6b';
const MESSAGE_UUID = '0b5c7d3e-1f2a-4b6c-8d9e-0a1b2c3d4e5f';
const ACCOUNT = '5d2a4f8e-0c1b-4d3e-9f6a-7b8c9d0e1f2a';
const ROUTE = '9a8b7c6d-5e4f-4321-8fed-cba987654321';

class FakeSpool {
  readonly stored = new Map<string, Buffer>();
  readonly published: InboundPublication[] = [];
  /** The subjects published while a store was still in flight. */
  readonly publishedBeforeStored: string[] = [];
  failuresBeforePublish = 0;
  storeFails = false;
  private storing = false;

  refOf = (name: string, bytes: Uint8Array): InboundSpoolRef => ({
    bucket: 'inbound-spool',
    name,
    size: bytes.length,
    sha256: 'x',
  });

  store = async (ref: InboundSpoolRef, bytes: Uint8Array): Promise<void> => {
    this.storing = true;
    // Acknowledged a few turns later, as JetStream's acknowledgement comes back later.
    for (let turn = 0; turn < 5; turn += 1) await Promise.resolve();
    this.storing = false;
    if (this.storeFails) throw new Error('spool unavailable');
    this.stored.set(ref.name, Buffer.from(bytes));
  };

  publish = (publication: InboundPublication): Promise<void> => {
    if (this.failuresBeforePublish > 0) {
      this.failuresBeforePublish -= 1;
      return Promise.reject(new Error('no ack'));
    }
    this.published.push(publication);
    if (this.storing) this.publishedBeforeStored.push(publication.subject);
    return Promise.resolve();
  };

  publishedOn(subject: string): InboundPublication['event'] | undefined {
    return this.published.find((publication) => publication.subject === subject)?.event;
  }
}

function routesAnswering(answer: (recipient: string) => RecipientMatch | Error) {
  return {
    match: (recipient: string): Promise<RecipientMatch> => {
      const result = answer(recipient);
      return result instanceof Error ? Promise.reject(result) : Promise.resolve(result);
    },
  };
}

const routes = (recipient: string): RecipientMatch => {
  if (recipient.endsWith('@routed.example')) {
    return recipient.startsWith('support@')
      ? { outcome: 'route', account_id: ACCOUNT, domain: 'routed.example', route_ids: [ROUTE] }
      : { outcome: 'unknown_recipient' };
  }
  return { outcome: 'not_routed' };
};

function build(answer: (recipient: string) => RecipientMatch | Error = routes) {
  const spool = new FakeSpool();
  const mx = new MxSession({
    routes: routesAnswering(answer),
    returnPathHosts: { isVerified: (host) => Promise.resolve(host === 'rp.routed.example') },
    spool,
    mailboxes: { bounceDomain: 'bounces.envoi.test', feedbackAddress: 'fbl@bounces.envoi.test' },
    limits: {
      maxMessageBytes: 1000,
      maxLineOctets: 100,
      publishAttempts: 2,
      content: { ...mxContentLimits(1000), maxDepth: 3 },
    },
    newId: () => INBOUND_ID,
    now: () => new Date('2026-01-02T03:04:05.000Z'),
  });
  return { mx, spool };
}

const address = (value: string): SMTPServerAddress => ({ address: value, args: false });

function session(): SMTPServerSession {
  return {
    id: 's1',
    remoteAddress: '127.0.0.1',
    hostNameAppearsAs: 'mta.example',
    secure: true,
    envelope: { mailFrom: address(''), rcptTo: [] },
  } as unknown as SMTPServerSession;
}

function dataStream(content: string): SMTPServerDataStream {
  const stream = new PassThrough() as unknown as SMTPServerDataStream;
  stream.sizeExceeded = false;
  (stream as unknown as PassThrough).end(Buffer.from(content));
  return stream;
}

/** RCPT as smtp-server does it: the address joins the envelope only when accepted. */
async function rcpt(mx: MxSession, smtp: SMTPServerSession, value: string) {
  const refusal = await mx.rcptTo(address(value), smtp);
  if (!refusal) smtp.envelope.rcptTo.push(address(value));
  return refusal;
}

/** A session past MAIL FROM `<>` and RCPT TO each of `recipients`. */
async function transaction(mx: MxSession, recipients: readonly string[]) {
  const smtp = session();
  mx.mailFrom(address(''), smtp);
  for (const recipient of recipients) await rcpt(mx, smtp, recipient);
  return smtp;
}

describe('MxSession', () => {
  it('answers RCPT from the routes: 550 5.1.1 unknown, 550 5.7.1 not routed, accepted when routed', async () => {
    const { mx } = build();
    const smtp = session();
    expect(mx.mailFrom(address(''), smtp)).toBeNull();
    expect(await rcpt(mx, smtp, 'support@routed.example')).toBeNull();
    expect((await rcpt(mx, smtp, 'nobody@routed.example'))?.message).toMatch(/^5\.1\.1 /);
    const denied = await rcpt(mx, smtp, 'user@elsewhere.example');
    expect(denied).toBeInstanceOf(SmtpReply);
    expect(denied?.responseCode).toBe(550);
    expect(denied?.message).toBe('5.7.1 Relaying denied');
  });

  it('denies a %-hack without asking the routes', async () => {
    const asked: string[] = [];
    const { mx } = build((recipient) => {
      asked.push(recipient);
      return routes(recipient);
    });
    const smtp = session();
    mx.mailFrom(address(''), smtp);
    expect((await rcpt(mx, smtp, 'support%x@routed.example'))?.message).toBe(
      '5.7.1 Relaying denied',
    );
    expect(asked).toEqual([]);
  });

  it("takes a VERP bounce on a domain's verified return-path host, and asks the routes for any other host", async () => {
    const { mx, spool } = build();
    const smtp = session();
    mx.mailFrom(address(''), smtp);
    expect(await rcpt(mx, smtp, `bounce+${MESSAGE_UUID}@rp.routed.example`)).toBeNull();
    const other = await rcpt(mx, smtp, `bounce+${MESSAGE_UUID}@rp.elsewhere.example`);
    expect(other?.message).toBe('5.7.1 Relaying denied');
    await mx.data(dataStream('x\r\n'), smtp);
    const bounce = spool.published[0].event as BounceMailEvent;
    expect(bounce.data.recipients).toEqual([
      { address: `bounce+${MESSAGE_UUID}@rp.routed.example`, message_uuid: MESSAGE_UUID },
    ]);
  });

  it('answers 451 4.3.0 when the routes service is unavailable', async () => {
    const { mx } = build(() => new RpcError(CommonErrorCode.Unavailable, 'no responders'));
    const smtp = session();
    mx.mailFrom(address(''), smtp);
    const reply = await rcpt(mx, smtp, 'support@routed.example');
    expect(reply?.responseCode).toBe(451);
    expect(reply?.message).toMatch(/^4\.3\.0 /);
  });

  it('refuses unknown RCPT parameters with 501', async () => {
    const { mx } = build();
    const smtp = session();
    mx.mailFrom(address(''), smtp);
    const reply = await mx.rcptTo(
      { address: 'fbl@bounces.envoi.test', args: { NOTIFY: 'NEVER' } },
      smtp,
    );
    expect(reply?.responseCode).toBe(501);
  });

  it('spools a mixed transaction once and publishes one event per kind, with ids derived from the inbound id', async () => {
    const { mx, spool } = build();
    const smtp = session();
    mx.mailFrom(address(''), smtp);
    await rcpt(mx, smtp, `bounce+${MESSAGE_UUID}@bounces.envoi.test`);
    await rcpt(mx, smtp, 'fbl@bounces.envoi.test');
    await rcpt(mx, smtp, 'support@routed.example');
    const raw =
      'From: Ann <ann@remote.example>\r\nMessage-ID: <m1@remote.example>\r\nSubject: hi\r\n\r\nbody\r\n';
    const reply = await mx.data(dataStream(raw), smtp);
    expect(reply).toBe(`2.0.0 Ok: queued as ${INBOUND_ID}`);
    expect(spool.stored.get(INBOUND_ID)?.toString()).toBe(raw);
    expect(spool.published.map((publication) => publication.subject).sort()).toEqual([
      'events.inbound.bounce.v1',
      'events.inbound.feedback.v1',
      'events.inbound.reception.v1',
      'events.inbound.routed.v1',
    ]);
    const bounce = spool.publishedOn('events.inbound.bounce.v1') as BounceMailEvent;
    expect(bounce.id).toBe(inboundEventId(INBOUND_ID, 'bounce'));
    expect(bounce.data).toMatchObject({
      inbound_id: INBOUND_ID,
      envelope_from: '',
      helo: 'mta.example',
      tls: true,
      recipients: [
        { address: `bounce+${MESSAGE_UUID}@bounces.envoi.test`, message_uuid: MESSAGE_UUID },
      ],
    });
    const routed = spool.publishedOn('events.inbound.routed.v1') as RoutedMailEvent;
    expect(routed.data).toMatchObject({
      account_id: ACCOUNT,
      recipients: [{ address: 'support@routed.example', route_ids: [ROUTE] }],
      raw: Buffer.from(raw).toString('base64'),
    });
    const reception = spool.publishedOn('events.inbound.reception.v1') as InboundReceptionEvent;
    expect(reception).toEqual({
      id: inboundEventId(INBOUND_ID, 'reception/support@routed.example'),
      type: 'message.reception',
      timestamp: '2026-01-02T03:04:05.000Z',
      data: {
        account_id: ACCOUNT,
        event: 'on_reception',
        from: 'ann@remote.example',
        recipient: 'support@routed.example',
        subject: 'hi',
        message_id_header: '<m1@remote.example>',
        id: INBOUND_ID,
        is_bot: false,
        direction: 'inbound',
      },
    });
    const ids = new Set(spool.published.map((publication) => publication.event.id));
    expect(ids.size).toBe(4);
  });

  it('publishes routed and reception events while the spool is stored, bounce and feedback events once it is', async () => {
    const { mx, spool } = build();
    const smtp = await transaction(mx, [
      `bounce+${MESSAGE_UUID}@bounces.envoi.test`,
      'fbl@bounces.envoi.test',
      'support@routed.example',
    ]);
    const reply = await mx.data(dataStream('Subject: hi\r\n\r\nbody\r\n'), smtp);
    expect(reply).toBe(`2.0.0 Ok: queued as ${INBOUND_ID}`);
    expect(spool.publishedBeforeStored).toEqual([
      'events.inbound.routed.v1',
      'events.inbound.reception.v1',
    ]);
    expect(spool.published).toHaveLength(4);
  });

  it('stores no spool for a small message only routes take: its routed event carries the bytes', async () => {
    const { mx, spool } = build();
    spool.storeFails = true;
    const smtp = await transaction(mx, ['support@routed.example']);
    const raw = 'Subject: hi\r\n\r\nhello\r\n';
    expect(await mx.data(dataStream(raw), smtp)).toBe(`2.0.0 Ok: queued as ${INBOUND_ID}`);
    expect(spool.stored.size).toBe(0);
    const routed = spool.publishedOn('events.inbound.routed.v1') as RoutedMailEvent;
    expect(Buffer.from(routed.data.raw ?? '', 'base64').toString()).toBe(raw);
    expect(routed.data.spool).toBeUndefined();
  });

  it('publishes again with the same id after a failed acknowledgement', async () => {
    const { mx, spool } = build();
    spool.failuresBeforePublish = 1;
    const smtp = session();
    mx.mailFrom(address(''), smtp);
    await rcpt(mx, smtp, 'fbl@bounces.envoi.test');
    await expect(mx.data(dataStream('x\r\n'), smtp)).resolves.toMatch(/^2\.0\.0 /);
    expect(spool.published).toHaveLength(1);
  });

  it('fails the DATA (451 by the server) when publishing keeps failing', async () => {
    const { mx, spool } = build();
    spool.failuresBeforePublish = 2;
    const smtp = session();
    mx.mailFrom(address(''), smtp);
    await rcpt(mx, smtp, 'fbl@bounces.envoi.test');
    await expect(mx.data(dataStream('x\r\n'), smtp)).rejects.toThrow('no ack');
  });

  it('refuses an oversized message with 552 5.3.4 and a long line with 554 5.6.0, storing nothing', async () => {
    const { mx, spool } = build();
    const smtp = session();
    mx.mailFrom(address(''), smtp);
    await rcpt(mx, smtp, 'fbl@bounces.envoi.test');
    const big = await mx.data(dataStream(`${'a'.repeat(80)}\r\n`.repeat(20)), smtp);
    expect(big).toBeInstanceOf(SmtpReply);
    expect((big as SmtpReply).message).toMatch(/^5\.3\.4 /);
    const long = await mx.data(dataStream(`${'a'.repeat(101)}\r\n`), smtp);
    expect((long as SmtpReply).responseCode).toBe(554);
    expect(spool.stored.size).toBe(0);
  });

  it.each([
    ['the spool available', false],
    ['the spool unavailable', true],
  ])(
    'refuses a message its parse rejects (here: nesting deeper than 3) with 554 5.6.0, %s, keeping nothing',
    async (_spool, storeFails) => {
      const { mx, spool } = build();
      spool.storeFails = storeFails;
      const smtp = session();
      mx.mailFrom(address(''), smtp);
      await rcpt(mx, smtp, 'fbl@bounces.envoi.test');
      const nested = 'Content-Type: multipart/mixed; boundary="n"\r\n\r\n--n\r\n'.repeat(5);
      const reply = await mx.data(dataStream(`Subject: deep\r\n${nested}\r\nx\r\n`), smtp);
      expect(reply).toBeInstanceOf(SmtpReply);
      expect((reply as SmtpReply).message).toMatch(/^5\.6\.0 /);
      expect((reply as SmtpReply).responseCode).toBe(554);
      expect(spool.stored.size).toBe(0);
      expect(spool.published).toHaveLength(0);
    },
  );

  it('fails the DATA of an acceptable message when the spool is unavailable, publishing nothing', async () => {
    const { mx, spool } = build();
    spool.storeFails = true;
    const smtp = await transaction(mx, ['fbl@bounces.envoi.test']);
    await expect(mx.data(dataStream('Subject: hi\r\n\r\nhello\r\n'), smtp)).rejects.toThrow(
      'spool unavailable',
    );
    expect(spool.published).toHaveLength(0);
  });
});
