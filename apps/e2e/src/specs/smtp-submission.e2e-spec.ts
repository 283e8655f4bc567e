import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import type { CreatedSmtpCredentialRecord } from '@envoi/contracts-accounts';
import type { DomainRecord } from '@envoi/contracts-domains';
import type { MessageRecord, MessageSummaryRecord } from '@envoi/contracts-messages';
import { pollUntil } from '@envoi/shared-testing';
import nodemailer from 'nodemailer';

import {
  type AccountSession,
  closeSessions,
  createAccountSession,
} from '../support/account-session';
import { dkimResults } from '../support/dkim';
import { createVerifiedDomain } from '../support/domains';
import { e2eEnvironment } from '../support/environment';
import { receiptsFor, type StoredReceipt } from '../support/smtp-receipts';

const ADMIN = path.resolve(__dirname, '../../../../dist/tools/admin/main.js');
const CLIENT_TIMEOUT_MS = 30_000;
const QUEUED = /250 2\.0\.0 Ok: queued as (<[^>\s]+>)/;

type Kind = 'plain' | 'html with attachments' | '8BITMIME';
type ClientName = 'nodemailer' | 'swaks' | 'smtplib';
type MessageSummary = Pick<MessageSummaryRecord, 'id' | 'status'>;

interface Login {
  username: string;
  password: string;
}

interface Envelope {
  from: string;
  to: string;
}

/** A message as a client submits it: CRLF line endings, no Message-ID (the platform sets one). */
function compose(kind: Kind, envelope: Envelope, extraHeaders: string[] = []): Buffer {
  const headers = [
    `From: App <${envelope.from}>`,
    `To: <${envelope.to}>`,
    `Subject: SMTP ${kind}`,
    'Date: Wed, 25 Nov 2026 12:00:00 +0000',
    'MIME-Version: 1.0',
    ...extraHeaders,
  ];
  if (kind === 'plain') {
    return lines([
      ...headers,
      'Content-Type: text/plain; charset=us-ascii',
      '',
      'Hello over SMTP.',
      '.. a leading dot',
      '',
    ]);
  }
  if (kind === '8BITMIME') {
    return lines([
      ...headers,
      'Content-Type: text/plain; charset=utf-8',
      'Content-Transfer-Encoding: 8bit',
      '',
      'Grüße aus Köln — ünïcödé ✓',
      '',
    ]);
  }
  const attachment = randomBytes(600)
    .toString('base64')
    .replace(/(.{76})/g, '$1\r\n');
  return lines([
    ...headers,
    'Content-Type: multipart/mixed; boundary="outer"',
    '',
    '--outer',
    'Content-Type: multipart/alternative; boundary="inner"',
    '',
    '--inner',
    'Content-Type: text/plain; charset=us-ascii',
    '',
    'Hello in text.',
    '--inner',
    'Content-Type: text/html; charset=us-ascii',
    '',
    '<html><body><p>Hello in <b>HTML</b>.</p></body></html>',
    '--inner--',
    '--outer',
    'Content-Type: application/octet-stream; name="data.bin"',
    'Content-Disposition: attachment; filename="data.bin"',
    'Content-Transfer-Encoding: base64',
    '',
    attachment,
    '--outer',
    'Content-Type: text/csv; name="report.csv"',
    'Content-Disposition: attachment; filename="report.csv"',
    '',
    'a,b',
    '1,2',
    '--outer--',
    '',
  ]);
}

function lines(all: string[]): Buffer {
  return Buffer.from(all.join('\r\n'), 'utf8');
}

function split(raw: string): { headers: string; body: string } {
  const at = raw.indexOf('\r\n\r\n');
  return { headers: raw.slice(0, at + 2), body: raw.slice(at + 4) };
}

function run(command: string, args: string[], input?: string): Promise<string> {
  // NATS_URL: the admin CLI reaches the e2e platform's bus.
  const env = { ...process.env, NATS_URL: e2eEnvironment().natsUrl };
  return new Promise((resolve, reject) => {
    const child = execFile(
      command,
      args,
      { timeout: CLIENT_TIMEOUT_MS, env },
      (error, stdout, stderr) =>
        error
          ? reject(new Error(`${command}: ${error.message}\n${stdout}\n${stderr}`))
          : resolve(stdout),
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** The operator's suspension (admin CLI), broadcast to every replica. */
async function suspendByOperator(accountId: string): Promise<void> {
  await run(process.execPath, [
    ADMIN,
    'accounts',
    'suspend',
    accountId,
    '--reason',
    'abuse report',
  ]);
}

/** Python's smtplib: STARTTLS, AUTH PLAIN, MAIL FROM (BODY=8BITMIME for 8-bit mail), DATA. */
const SMTPLIB_SCRIPT = `
import smtplib, ssl, sys, json
args = json.loads(sys.stdin.read())
context = ssl.create_default_context(cafile=args["ca"])
context.check_hostname = False
with smtplib.SMTP(args["host"], args["port"], timeout=20) as smtp:
    smtp.ehlo()
    smtp.starttls(context=context)
    smtp.ehlo()
    smtp.login(args["username"], args["password"])
    options = ["BODY=8BITMIME"] if args["eightbit"] else []
    code, reply = smtp.mail(args["from"], options)
    if code != 250: raise SystemExit("MAIL: %d %s" % (code, reply))
    code, reply = smtp.rcpt(args["to"])
    if code != 250: raise SystemExit("RCPT: %d %s" % (code, reply))
    code, reply = smtp.data(open(args["file"], "rb").read())
    print("%d %s" % (code, reply.decode()))
`;

/** Submits `raw` with a real client and returns the queue id (the Message-ID) of its 250. */
async function submit(
  client: ClientName,
  login: Login,
  envelope: Envelope,
  raw: Buffer,
  eightBit: boolean,
): Promise<string> {
  const { host, port } = e2eEnvironment().smtpSubmission;
  let transcript: string;
  if (client === 'nodemailer') {
    const transport = nodemailer.createTransport({
      host,
      port,
      secure: false,
      requireTLS: true,
      auth: { user: login.username, pass: login.password },
      tls: { ca: readFileSync(e2eEnvironment().caFile), servername: 'localhost' },
    });
    try {
      const info = await transport.sendMail({
        envelope: { from: envelope.from, to: [envelope.to] },
        raw,
      });
      transcript = info.response;
    } finally {
      transport.close();
    }
  } else {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'envoi-smtp-e2e-'));
    try {
      const file = path.join(dir, 'message.eml');
      // swaks ends the data with a CRLF of its own: it gets the message without its last one.
      writeFileSync(file, client === 'swaks' ? raw.subarray(0, raw.length - 2) : raw);
      transcript =
        client === 'swaks'
          ? await run('swaks', [
              '--server',
              host,
              '--port',
              String(port),
              '--tls',
              '--auth',
              'PLAIN',
              '--auth-user',
              login.username,
              '--auth-password',
              login.password,
              '--from',
              envelope.from,
              '--to',
              envelope.to,
              '--data',
              file,
            ])
          : await run(
              'python3',
              ['-c', SMTPLIB_SCRIPT],
              JSON.stringify({
                host,
                port,
                ca: e2eEnvironment().caFile,
                username: login.username,
                password: login.password,
                from: envelope.from,
                to: envelope.to,
                file,
                eightbit: eightBit,
              }),
            );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const queued = QUEUED.exec(transcript);
  if (!queued?.[1]) throw new Error(`${client}: no 250 with a queue id in\n${transcript}`);
  return queued[1];
}

/**
 * Issue 16 end to end: real SMTP clients (nodemailer, swaks, Python's smtplib) submit over
 * STARTTLS with a credential created through the API; the mail reaches the recipients' MX (the
 * loopback sink) DKIM-signed with its body byte for byte as submitted, and the API shows it.
 */
describe('SMTP submission (issue 16)', () => {
  let session: AccountSession;
  let domain: DomainRecord;
  let login: Login;

  async function credential(on: AccountSession, body: Record<string, unknown>): Promise<Login> {
    const created = await on.api.post<CreatedSmtpCredentialRecord>(on.path('/smtp-credentials'), {
      name: `smtp-${randomUUID().slice(0, 8)}`,
      ...body,
    });
    expect(created.status).toBe(201);
    return { username: created.body.username, password: created.body.password };
  }

  function envelope(prefix: string): Envelope {
    return {
      from: `app@${domain.domain}`,
      to: `${prefix}-${randomUUID().slice(0, 8)}@example.net`,
    };
  }

  /** The message the 250 reply named (by its Message-ID header), once it has this status. */
  async function waitForStatus(messageIdHeader: string, status: string): Promise<MessageRecord> {
    const query = `/messages?message_id_header=${encodeURIComponent(messageIdHeader)}`;
    const found = await pollUntil(
      async () =>
        (await session.api.get<{ data: MessageSummary[] }>(session.path(query))).body.data,
      (listed) => listed.length === 1 && listed[0]?.status === status,
      { timeoutMs: 30_000, what: `the message ${messageIdHeader} to become ${status}` },
    );
    const response = await session.api.get<MessageRecord>(
      session.path(`/messages/${encodeURIComponent(found[0]?.id ?? '')}`),
    );
    return response.body;
  }

  function receipt(to: string): Promise<StoredReceipt> {
    return pollUntil(
      () => receiptsFor(to),
      (found) => found.length === 1,
      {
        timeoutMs: 30_000,
        what: `mail for ${to} at the sink`,
      },
    ).then((found) => found[0]);
  }

  beforeAll(async () => {
    session = await createAccountSession();
    domain = await createVerifiedDomain(session);
    login = await credential(session, { scope: 'global' });
  });

  afterAll(async () => {
    await closeSessions();
  });

  const cases: Array<[ClientName, Kind]> = [];
  for (const client of ['nodemailer', 'swaks', 'smtplib'] as const) {
    for (const kind of ['plain', 'html with attachments', '8BITMIME'] as const)
      cases.push([client, kind]);
  }

  it.each(cases)(
    '%s submits %s mail that arrives DKIM-signed and byte-identical',
    async (client, kind) => {
      const to = envelope(client);
      const raw = compose(kind, to);
      const id = await submit(client, login, to, raw, kind === '8BITMIME');

      const received = await receipt(to.to);
      expect(await dkimResults(received.raw)).toContainEqual([domain.domain, 'pass']);
      const submitted = split(raw.toString('utf8'));
      const delivered = split(received.raw);
      expect(delivered.body).toBe(submitted.body);
      for (const header of submitted.headers.split('\r\n').filter(Boolean)) {
        expect(delivered.headers).toContain(`${header}\r\n`);
      }
      expect(delivered.headers).toMatch(
        new RegExp(`^Message-ID:\\s*${id.replace(/[.+]/g, '\\$&')}\\r$`, 'im'),
      );

      // The API lists it (found by the Message-ID header of the 250), delivered, with its attempt.
      const record = await waitForStatus(id, 'Delivered');
      expect(record.delivery_attempts.map((attempt) => attempt.status)).toEqual(['Delivered']);
    },
  );

  it('strips the control headers before delivery', async () => {
    const to = envelope('control');
    const raw = compose('plain', to, ['AhaSend-Track-Opens: false', 'ahasend-tags: smtp,e2e']);
    const id = await submit('nodemailer', login, to, raw, false);
    const received = await receipt(to.to);
    expect(received.raw).not.toMatch(/^ahasend-/im);
    await waitForStatus(id, 'Delivered');
  });

  it('refuses an invalid control header with 550 5.6.0 naming it', async () => {
    const to = envelope('invalid');
    const raw = compose('plain', to, ['ahasend-data-retention: 99']);
    await expect(submit('nodemailer', login, to, raw, false)).rejects.toMatchObject({
      responseCode: 550,
      response: expect.stringMatching(/^550 5\.6\.0 .*ahasend-data-retention/i) as unknown,
    });
  });

  it('simulates the mail of a sandbox credential', async () => {
    const sandbox = await credential(session, { scope: 'global', sandbox: true });
    const to = envelope('sandbox');
    const id = await submit('nodemailer', sandbox, to, compose('plain', to), false);
    await waitForStatus(id, 'Sandbox Delivered');
    expect(receiptsFor(to.to)).toHaveLength(0);
  });

  it('answers 521 at once to the next message of a session logged in before its account was suspended', async () => {
    const suspended = await createAccountSession();
    const own = await createVerifiedDomain(suspended);
    const suspendedLogin = await credential(suspended, { scope: 'global' });
    const { host, port } = e2eEnvironment().smtpSubmission;
    const transport = nodemailer.createTransport({
      host,
      port,
      pool: true,
      maxConnections: 1,
      requireTLS: true,
      auth: { user: suspendedLogin.username, pass: suspendedLogin.password },
      tls: { ca: readFileSync(e2eEnvironment().caFile), servername: 'localhost' },
    });
    const send = () => {
      const to = { from: `app@${own.domain}`, to: `held-${randomUUID().slice(0, 8)}@example.net` };
      return transport.sendMail({ envelope: to, raw: compose('plain', to) });
    };
    try {
      // The messages service now holds the account's settings (and status) for 10 s.
      expect((await send()).response).toMatch(QUEUED);
      const cachedAt = Date.now();
      await suspendByOperator(suspended.accountId);

      await expect(send()).rejects.toMatchObject({ responseCode: 521 });
      // Before ACCOUNT_CACHE_TTL_MS (10 s) ran out: the status change broadcast dropped it.
      expect(Date.now() - cachedAt).toBeLessThan(10_000);
    } finally {
      transport.close();
    }
  });

  it('answers 521 to the logins of a suspended account', async () => {
    const suspended = await createAccountSession();
    await createVerifiedDomain(suspended);
    const suspendedLogin = await credential(suspended, { scope: 'global' });
    await suspendByOperator(suspended.accountId);
    const { host, port } = e2eEnvironment().smtpSubmission;
    const transport = nodemailer.createTransport({
      host,
      port,
      requireTLS: true,
      auth: { user: suspendedLogin.username, pass: suspendedLogin.password },
      tls: { ca: readFileSync(e2eEnvironment().caFile), servername: 'localhost' },
    });
    try {
      await expect(transport.verify()).rejects.toMatchObject({ responseCode: 521 });
    } finally {
      transport.close();
    }
  });
});
