import nodemailer, { type Transporter } from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool';

/**
 * Where a pool submits: a STARTTLS port on loopback with the certificate's CA and, for a
 * submission port, a login (an MX takes none).
 */
export interface SmtpTarget {
  name: string;
  port: number;
  ca: string;
  login?: { username: string; password: string };
}

/** One message: its envelope and its bytes as the client sends them. */
export interface SmtpMessage {
  from: string;
  to: string;
  raw: Buffer;
}

export interface PoolRun {
  messages: number;
  seconds: number;
  /** Messages answered 250. */
  accepted: number;
  /** The first refusal or error, as the client reported it. */
  firstFailure: string | null;
  failures: number;
}

/** Called with each message answered 250, its reply, and when it came (performance.now()). */
export type OnAccepted = (message: SmtpMessage, response: string, at: number) => void;

/**
 * A pool of nodemailer SMTP connections (STARTTLS required, AUTH PLAIN when the target has a
 * login) kept open between runs, so that a run measures transactions, not logins.
 */
export class SmtpPool {
  private readonly transport: Transporter<SMTPPool.SentMessageInfo>;

  constructor(
    readonly target: SmtpTarget,
    connections: number,
  ) {
    this.transport = nodemailer.createTransport({
      pool: true,
      maxConnections: connections,
      maxMessages: Infinity,
      host: '127.0.0.1',
      port: target.port,
      secure: false,
      requireTLS: true,
      ...(target.login && {
        auth: { user: target.login.username, pass: target.login.password, method: 'PLAIN' },
      }),
      tls: { ca: target.ca, servername: 'localhost' },
    });
  }

  /**
   * Submits every message (at most `connections` in flight) and waits for every reply, for at
   * most `timeoutMs`: messages still unanswered then count as failures.
   */
  async run(
    messages: readonly SmtpMessage[],
    timeoutMs: number,
    onAccepted?: OnAccepted,
  ): Promise<PoolRun> {
    let accepted = 0;
    let failures = 0;
    let firstFailure: string | null = null;
    const fail = (reason: string) => {
      failures += 1;
      firstFailure ??= reason;
    };
    const started = process.hrtime.bigint();
    const sent = messages.map((message) =>
      this.transport
        .sendMail({ envelope: { from: message.from, to: [message.to] }, raw: message.raw })
        .then(
          (info) => {
            if (info.response.startsWith('250')) {
              accepted += 1;
              onAccepted?.(message, info.response, performance.now());
            } else fail(info.response);
          },
          (error: unknown) => fail(error instanceof Error ? error.message : String(error)),
        ),
    );
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    const outcome = await Promise.race([Promise.all(sent), timedOut]);
    clearTimeout(timer);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (outcome === 'timeout') {
      const unanswered = messages.length - accepted - failures;
      failures += unanswered;
      firstFailure ??= `${unanswered} messages unanswered after ${timeoutMs} ms`;
    }
    return { messages: messages.length, seconds, accepted, firstFailure, failures };
  }

  close(): void {
    this.transport.close();
  }
}

/** A multipart/alternative message (plain + HTML) from `from` to `to` with `headers` after To. */
export function alternativeMessage(parts: {
  from: string;
  fromName: string;
  to: string;
  headers: readonly string[];
  text: string;
  html: string;
}): SmtpMessage {
  const raw = [
    `From: "${parts.fromName}" <${parts.from}>`,
    `To: ${parts.to}`,
    ...parts.headers,
    'MIME-Version: 1.0',
    'Content-Type: multipart/alternative; boundary="b"',
    '',
    '--b',
    'Content-Type: text/plain; charset=utf-8',
    '',
    parts.text,
    '--b',
    'Content-Type: text/html; charset=utf-8',
    '',
    parts.html,
    '--b--',
    '',
  ].join('\r\n');
  return { from: parts.from, to: parts.to, raw: Buffer.from(raw) };
}
