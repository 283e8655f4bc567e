import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';

import { EVENTS_STREAM } from '@envoi/contracts-core';
import {
  type BounceMailEvent,
  type FeedbackMailEvent,
  INBOUND_SPOOL_BUCKET,
  InboundStreamSubjects,
} from '@envoi/contracts-routes';
import { connect, type NatsConnection } from 'nats';

import {
  MX_BOUNCE_DOMAIN,
  MX_FEEDBACK_ADDRESS,
  MX_MAX_MESSAGE_BYTES,
  useMxRig,
} from './mx-test-app';
import { SmtpWireClient } from './smtp-wire-client';

const GREETING_WAIT_MS = 10_000;
/** The MX's parse deadline (the library's default), which a bomb must never outlast. */
const PARSE_BOUND_MS = 10_000;
/** Bounds of the nmap run: the host as a whole, and the open-relay script within it. */
const NMAP_HOST_TIMEOUT_S = 90;
const NMAP_SCRIPT_TIMEOUT_S = 60;
const QUEUED_AS = /^250 2\.0\.0 Ok: queued as ([0-9a-f-]{36})$/;

function dsn(messageUuid: string): string {
  return [
    'From: MAILER-DAEMON@mx.remote.example',
    `To: bounce+${messageUuid}@${MX_BOUNCE_DOMAIN}`,
    'Subject: Undelivered Mail Returned to Sender',
    'Content-Type: multipart/report; report-type=delivery-status; boundary="b"',
    '',
    '--b',
    'Content-Type: message/delivery-status',
    '',
    'Final-Recipient: rfc822; gone@remote.example',
    'Action: failed',
    'Status: 5.1.1',
    '--b--',
    '',
  ].join('\r\n');
}

/** nmap's `smtp-open-relay` script against the MX on loopback (service detection runs it on any port). */
function nmapOpenRelay(port: number): Promise<string> {
  const args = [
    '-n',
    '-Pn',
    '-sT',
    '-sV',
    '--version-light',
    '-p',
    String(port),
    '--host-timeout',
    `${NMAP_HOST_TIMEOUT_S}s`,
    '--script-timeout',
    `${NMAP_SCRIPT_TIMEOUT_S}s`,
    '--script',
    'smtp-open-relay',
    '--script-args',
    'smtp-open-relay.domain=relay-probe.example,smtp-open-relay.ip=127.0.0.1',
    '127.0.0.1',
  ];
  return new Promise((resolve, reject) => {
    execFile(
      'nmap',
      args,
      { timeout: (NMAP_HOST_TIMEOUT_S + 10) * 1000 },
      (error, stdout, stderr) =>
        error ? reject(new Error(`nmap: ${error.message}\n${stdout}\n${stderr}`)) : resolve(stdout),
    );
  });
}

/**
 * The MX of the smtp app from dist/ over raw sockets, with the real bus: what it accepts and
 * refuses at RCPT (reliability plan 41-42), its size limit, and the spool and events it makes
 * durable before 250 (item 44), read back from JetStream even after a kill -9.
 */
describe('smtp MX', () => {
  const rig = useMxRig();
  const clients: SmtpWireClient[] = [];
  let nats: NatsConnection;

  beforeAll(async () => {
    nats = await connect({ servers: rig().platform.natsUrl });
  });
  afterAll(async () => {
    await nats?.close();
  });
  afterEach(() => {
    for (const client of clients.splice(0)) client.close();
  });

  async function open(): Promise<SmtpWireClient> {
    const client = await SmtpWireClient.connect(rig().mxPort);
    clients.push(client);
    expect((await client.reply(GREETING_WAIT_MS)).code).toBe(220);
    expect((await client.command('EHLO mta.remote.example')).code).toBe(250);
    return client;
  }

  /** A whole transaction from the null sender; the reply to the final dot. */
  async function deliver(client: SmtpWireClient, recipients: string[], body: string) {
    expect((await client.command('MAIL FROM:<>')).code).toBe(250);
    for (const recipient of recipients) {
      expect((await client.command(`RCPT TO:<${recipient}>`)).text).toMatch(/^250 /);
    }
    expect((await client.command('DATA')).code).toBe(354);
    return client.command(`${body.replace(/\r\n$/, '')}\r\n.`);
  }

  /** A DSN to a fresh VERP address, answered 250 with the inbound id. */
  async function deliverBounce() {
    const messageUuid = randomUUID();
    const body = dsn(messageUuid);
    const reply = await deliver(await open(), [`bounce+${messageUuid}@${MX_BOUNCE_DOMAIN}`], body);
    const inboundId = QUEUED_AS.exec(reply.text)?.[1];
    expect(inboundId).toBeDefined();
    return { messageUuid, body, inboundId };
  }

  async function lastEvent<E>(subject: string): Promise<E> {
    const jsm = await nats.jetstreamManager();
    const message = await jsm.streams.getMessage(EVENTS_STREAM, { last_by_subj: subject });
    return JSON.parse(new TextDecoder().decode(message.data)) as E;
  }

  async function spooled(name: string): Promise<string | undefined> {
    const store = await nats.jetstream().views.os(INBOUND_SPOOL_BUCKET);
    const bytes = await store.getBlob(name);
    return bytes ? Buffer.from(bytes).toString('latin1') : undefined;
  }

  it('offers STARTTLS and SIZE but never AUTH, before and after TLS', async () => {
    const client = await SmtpWireClient.connect(rig().mxPort);
    clients.push(client);
    await client.reply(GREETING_WAIT_MS);
    const ehlo = await client.command('EHLO mta.remote.example');
    expect(ehlo.lines.some((line) => line.includes('STARTTLS'))).toBe(true);
    expect(ehlo.lines.some((line) => line.includes(`SIZE ${MX_MAX_MESSAGE_BYTES}`))).toBe(true);
    expect(ehlo.lines.some((line) => line.includes('AUTH'))).toBe(false);
    const secure = await client.startTls();
    expect(secure.lines.some((line) => line.includes('AUTH'))).toBe(false);
    expect((await client.command('AUTH PLAIN AHVzZXIAcGFzcw==')).code).toBeGreaterThanOrEqual(500);
  });

  it('spools mail to a VERP bounce address and publishes the bounce with its message uuid', async () => {
    const { messageUuid, body, inboundId } = await deliverBounce();
    const event = await lastEvent<BounceMailEvent>(InboundStreamSubjects.bounce.name);
    expect(event.type).toBe('inbound.bounce');
    expect(event.data).toMatchObject({
      inbound_id: inboundId,
      envelope_from: '',
      helo: 'mta.remote.example',
      remote_address: '127.0.0.1',
      recipients: [
        { address: `bounce+${messageUuid}@${MX_BOUNCE_DOMAIN}`, message_uuid: messageUuid },
      ],
      spool: { bucket: INBOUND_SPOOL_BUCKET, name: inboundId, size: Buffer.byteLength(body) },
    });
    expect(await spooled(event.data.spool.name)).toBe(body);
  });

  it('publishes mail to the feedback address as a feedback event', async () => {
    const client = await open();
    const body =
      'Subject: complaint\r\nContent-Type: multipart/report; report-type=feedback-report; boundary="f"\r\n\r\n--f--\r\n';
    const reply = await deliver(client, [MX_FEEDBACK_ADDRESS.toUpperCase()], body);
    const inboundId = QUEUED_AS.exec(reply.text)?.[1];
    const event = await lastEvent<FeedbackMailEvent>(InboundStreamSubjects.feedback.name);
    expect(event.data).toMatchObject({ inbound_id: inboundId, recipient: MX_FEEDBACK_ADDRESS });
    expect(await spooled(event.data.spool.name)).toBe(body);
  });

  it.each([
    ['a %-hack', `user%victim.example@${MX_BOUNCE_DOMAIN}`],
    ['a %-hack on another domain', 'user%victim.example@customer.example'],
    ['a quoted @', '"user@victim.example"@customer.example'],
    ['a source route', '@relay.example,@other.example:user@victim.example'],
    ['another address on the bounce domain', `postmaster@${MX_BOUNCE_DOMAIN}`],
  ])('denies relaying for %s with 550 5.7.1', async (_name, recipient) => {
    const client = await open();
    expect((await client.command('MAIL FROM:<sender@remote.example>')).code).toBe(250);
    const reply = await client.command(`RCPT TO:<${recipient}>`);
    expect(reply.text).toMatch(/^550 5\.7\.1 /);
  });

  it('answers 451 4.3.0 at RCPT for another domain while the routes service does not answer', async () => {
    const client = await open();
    expect((await client.command('MAIL FROM:<sender@remote.example>')).code).toBe(250);
    expect((await client.command('RCPT TO:<support@customer.example>')).text).toMatch(
      /^451 4\.3\.0 /,
    );
  });

  it('refuses a message over the size limit with 552 5.3.4 and publishes nothing', async () => {
    const before = await lastEvent<FeedbackMailEvent>(InboundStreamSubjects.feedback.name);
    const client = await open();
    const line = `${'x'.repeat(76)}\r\n`;
    const reply = await deliver(
      client,
      [MX_FEEDBACK_ADDRESS],
      `Subject: big\r\n\r\n${line.repeat(Math.ceil(MX_MAX_MESSAGE_BYTES / line.length) + 10)}`,
    );
    expect(reply.text).toMatch(/^552 5\.3\.4 /);
    const after = await lastEvent<FeedbackMailEvent>(InboundStreamSubjects.feedback.name);
    expect(after.id).toBe(before.id);
  });

  it('refuses a line over 998 octets with 554 5.6.0', async () => {
    const reply = await deliver(
      await open(),
      [MX_FEEDBACK_ADDRESS],
      `Subject: x\r\n\r\n${'y'.repeat(999)}\r\n`,
    );
    expect(reply.text).toMatch(/^554 5\.6\.0 /);
  });

  /** MIME bombs within the size limit (a decoded size never exceeds the raw one: 552 above). */
  const bombs: Array<[string, string, RegExp]> = [
    [
      'nesting deeper than 30 multiparts',
      `Subject: deep\r\n${'Content-Type: multipart/mixed; boundary="n"\r\n\r\n--n\r\n'.repeat(32)}\r\nx\r\n`,
      /^554 5\.6\.0 /,
    ],
    [
      'more than 1000 parts',
      `Subject: parts\r\nContent-Type: multipart/mixed; boundary="p"\r\n\r\n${'--p\r\n\r\nx\r\n'.repeat(1001)}--p--\r\n`,
      /^554 5\.6\.0 /,
    ],
    [
      'more than 1000 header fields',
      `${'X-Field: 1\r\n'.repeat(1001)}\r\nbody\r\n`,
      /^554 5\.6\.0 /,
    ],
  ];

  it.each(bombs)('refuses a MIME bomb (%s) and publishes nothing', async (_name, body, refusal) => {
    const before = await lastEvent<FeedbackMailEvent>(InboundStreamSubjects.feedback.name);
    const started = Date.now();
    const reply = await deliver(await open(), [MX_FEEDBACK_ADDRESS], body);
    expect(reply.text).toMatch(refusal);
    expect(Date.now() - started).toBeLessThan(PARSE_BOUND_MS);
    const after = await lastEvent<FeedbackMailEvent>(InboundStreamSubjects.feedback.name);
    expect(after.id).toBe(before.id);
  });

  it(
    "is no open relay by nmap's smtp-open-relay script (item 41)",
    async () => {
      const report = await nmapOpenRelay(rig().mxPort);
      expect(report).toContain('smtp-open-relay');
      expect(report).toMatch(/doesn't seem to be an open relay, all tests failed/);
    },
    (NMAP_HOST_TIMEOUT_S + 20) * 1000,
  );

  it('holds the submission limits: 421 4.7.0 over the per-IP connections, 421 4.4.2 when idle', async () => {
    const admitted = [await open(), await open(), await open()];
    const refused = await SmtpWireClient.connect(rig().mxPort);
    clients.push(refused);
    expect((await refused.reply(GREETING_WAIT_MS)).text).toMatch(/^421 4\.7\.0 /);
    const idle = await admitted[0].reply(GREETING_WAIT_MS);
    expect(idle.text).toMatch(/^421 4\.4\.2 /);
    await admitted[0].waitClosed();
  });

  it('keeps the spool and the event of a 250 through a kill -9 of the smtp app', async () => {
    const { messageUuid, body, inboundId } = await deliverBounce();
    await rig().smtp.smtp.kill();

    const event = await lastEvent<BounceMailEvent>(InboundStreamSubjects.bounce.name);
    expect(event.data.inbound_id).toBe(inboundId);
    expect(event.data.recipients[0].message_uuid).toBe(messageUuid);
    expect(await spooled(event.data.spool.name)).toBe(body);

    await rig().restart();
    const again = await open();
    expect((await again.command('NOOP')).code).toBe(250);
  });
});
