import type { KeyObject } from 'node:crypto';
import { Readable } from 'node:stream';

import { dkimSigned } from './dkim-signature';
import { linkedSignal } from './linked-signal';
import type { MailHost } from './mx-resolver';
import {
  hasEightBitBytes,
  SmtpAbortedError,
  type SmtpEndpoint,
  type SmtpEnvelope,
  type SmtpPool,
} from './smtp-pool';
import { formatSmtpReply, parseSmtpReply, type SmtpReply } from './smtp-reply';

/** The header fields a DKIM signature covers (those present), relaxed/relaxed. */
export const DKIM_SIGNED_HEADERS = [
  'From',
  'Sender',
  'Reply-To',
  'Subject',
  'Date',
  'Message-ID',
  'To',
  'Cc',
  'MIME-Version',
  'Content-Type',
  'Content-Transfer-Encoding',
  'Content-ID',
  'Content-Description',
  'In-Reply-To',
  'References',
  'List-Id',
  'List-Unsubscribe',
  'List-Unsubscribe-Post',
  'Feedback-ID',
].join(':');

export interface DkimSigningKey {
  domainName: string;
  keySelector: string;
  /** Parsed once per domain: Node re-parses a PEM string on every signature. */
  privateKey: KeyObject;
}

export interface OutboundMessage {
  envelope: SmtpEnvelope;
  raw: Buffer;
  dkim: DkimSigningKey;
}

/** A recipient the server refused at RCPT TO, with its own reply (null: not a reply). */
export interface RecipientRefusal {
  recipient: string;
  reply: SmtpReply | null;
  /** The reply, or the error, one line. */
  text: string;
}

export type SendResult =
  /** 2xx after the data; the `refused` recipients were refused at RCPT (partial delivery). */
  | { kind: 'accepted'; host: string; reply: string; secure: boolean; refused: RecipientRefusal[] }
  /** Every recipient was refused at RCPT, each with its own reply (4xx or 5xx). */
  | { kind: 'refused'; host: string; refused: RecipientRefusal[] }
  /** A 5xx reply to MAIL FROM or to the data: it applies to every recipient. */
  | { kind: 'permanent'; host: string; reply: SmtpReply }
  /** A 4xx reply, a timeout, or no server reachable. */
  | { kind: 'transient'; host: string; reply: string }
  /** The caller's signal ended the attempt; `dataSent`: the message may have been received. */
  | { kind: 'aborted'; host: string; dataSent: boolean };

interface RejectedRecipientError {
  recipient?: string;
  response?: string;
  message?: string;
}

interface SmtpErrorLike {
  code?: string;
  message?: string;
  response?: string;
  responseCode?: number;
  command?: string;
  rejectedErrors?: RejectedRecipientError[];
}

function asSmtpError(error: unknown): SmtpErrorLike {
  return typeof error === 'object' && error !== null ? error : {};
}

/** One line describing a failure without a usable reply. */
export function describeSmtpError(error: unknown): string {
  const details = asSmtpError(error);
  const text = (details.message ?? String(error)).replace(/\s+/g, ' ').trim();
  return details.code ? `${details.code}: ${text}` : text;
}

/** Each recipient's refusal, in the order given; recipients nodemailer did not name are left out. */
function refusals(errors: readonly RejectedRecipientError[]): RecipientRefusal[] {
  return errors.flatMap((error) => {
    if (!error.recipient) return [];
    const reply = parseSmtpReply(error.response);
    const text = reply ? formatSmtpReply(reply) : describeSmtpError(error);
    return [{ recipient: error.recipient, reply, text }];
  });
}

/** A failed TLS upgrade (STARTTLS refused, or the handshake failed). */
function isTlsFailure(error: unknown): boolean {
  return asSmtpError(error).code === 'ETLS';
}

/** The caller's say over the sessions of an attempt. */
export interface SessionGate {
  /**
   * Called with a connection in hand, as the envelope goes out: the message's data waits for
   * its answer. False sends no data (the session is closed) and the attempt ends as aborted; a
   * rejection does the same and is thrown to the caller.
   */
  open(): Promise<boolean>;
  /** Once aborted, stops a session whose message data has not been read yet (not one after). */
  readonly beforeData: AbortSignal;
}

export interface SmtpSenderOptions {
  /** Addresses (over every MX host) one attempt tries at most. */
  maxAddresses: number;
  /** Whether a failed STARTTLS handshake may be retried in plain text on the same address. */
  plainFallback: boolean;
}

/**
 * Sends one DKIM-signed message to a recipient domain's mail hosts, in order, over pooled
 * connections. Connection failures (refused, timeout, a bad greeting or EHLO, a failed STARTTLS)
 * move on to the next address; a session that fails before the message's data was read is
 * retried on the next address (or a fresh connection, when a pooled one had gone stale). Once
 * the data has been read the outcome is final for this attempt: a server that took the data and
 * then went silent may have accepted it (RFC 1047), so it is never sent elsewhere at once.
 */
export class SmtpSender {
  constructor(
    private readonly pool: SmtpPool,
    private readonly options: SmtpSenderOptions,
  ) {}

  async send(
    hosts: MailHost[],
    message: OutboundMessage,
    signal: AbortSignal,
    gate?: SessionGate,
  ): Promise<SendResult> {
    // Signed once for every address tried.
    const data = await dkimSigned(message.raw, {
      ...message.dkim,
      headerFieldNames: DKIM_SIGNED_HEADERS,
    });
    const envelope = hasEightBitBytes(data)
      ? { ...message.envelope, use8BitMime: true }
      : message.envelope;
    let tried = 0;
    let last: { host: string; reply: string } = { host: '', reply: 'no address to try' };
    for (const { host, addresses } of hosts) {
      for (const address of addresses) {
        if (tried >= this.options.maxAddresses) return { kind: 'transient', ...last };
        tried++;
        const endpoint = { address, host, plain: false };
        const outcome = await this.sendTo(endpoint, envelope, data, signal, gate);
        if (outcome.kind !== 'next') return outcome;
        last = { host, reply: outcome.reply };
      }
    }
    return { kind: 'transient', ...last };
  }

  /** One address: a final result, or `next` (nothing was sent; try the next address). */
  private async sendTo(
    first: SmtpEndpoint,
    envelope: SmtpEnvelope,
    data: Buffer,
    attemptSignal: AbortSignal,
    gate: SessionGate | undefined,
  ): Promise<SendResult | { kind: 'next'; reply: string }> {
    let endpoint = first;
    // At most: a stale pooled session, then a fresh one, then a plain-text fallback.
    for (let round = 0; round < 3; round++) {
      const session = sessionSignal(attemptSignal, gate?.beforeData);
      const signal = session.signal;
      let leased;
      try {
        leased = await this.pool.acquire(endpoint, signal);
      } catch (error) {
        session.done();
        if (error instanceof SmtpAbortedError || signal.aborted) {
          return { kind: 'aborted', host: endpoint.host, dataSent: false };
        }
        if (this.options.plainFallback && !endpoint.plain && isTlsFailure(error)) {
          endpoint = { ...endpoint, plain: true };
          continue;
        }
        return { kind: 'next', reply: connectionReply(error) };
      }
      // The gate may claim the attempt (a database write): it runs while the envelope goes out,
      // and the message's data waits for its answer.
      const verdict = new GateVerdict(gate, session.stop);
      const stream = session.watch(verdict.guard(data));
      try {
        const info = await this.pool.send(leased, envelope, stream, signal);
        this.pool.giveBack(leased, true);
        const reply = parseSmtpReply(info.response);
        return {
          kind: 'accepted',
          host: endpoint.host,
          reply: reply ? formatSmtpReply(reply) : info.response,
          secure: leased.secure,
          refused: refusals(info.rejectedErrors),
        };
      } catch (error) {
        this.pool.giveBack(leased, false);
        const dataSent = stream.readableDidRead;
        stream.destroy();
        // Whatever ended the session, the attempt's claim is settled before the result is.
        await verdict.settled();
        if (signal.aborted) return { kind: 'aborted', host: endpoint.host, dataSent };
        const details = asSmtpError(error);
        const refused = refusals(details.rejectedErrors ?? []);
        if (details.command === 'RCPT TO' && refused.length > 0) {
          return { kind: 'refused', host: endpoint.host, refused };
        }
        const reply = parseSmtpReply(details.response);
        if (reply && reply.code >= 400) {
          return reply.code >= 500
            ? { kind: 'permanent', host: endpoint.host, reply }
            : { kind: 'transient', host: endpoint.host, reply: formatSmtpReply(reply) };
        }
        if (dataSent) {
          return { kind: 'transient', host: endpoint.host, reply: describeSmtpError(error) };
        }
        // Nothing of the message went out: a stale pooled session gets one fresh try here.
        if (leased.reused && round === 0) continue;
        return { kind: 'next', reply: describeSmtpError(error) };
      } finally {
        session.done();
      }
    }
    return { kind: 'next', reply: 'gave up on this address' };
  }
}

/**
 * A session's wait for its gate: the message's data is given to the session only once the gate
 * opened; a gate that refused, or failed, stops the session before any data went out.
 */
class GateVerdict {
  private readonly opened: Promise<boolean>;
  private failure: { error: unknown } | null = null;

  /** `stop` ends the session (before its data) when the gate refuses or fails. */
  constructor(gate: SessionGate | undefined, stop: () => void) {
    this.opened = gate
      ? gate.open().then(
          (open) => {
            if (!open) stop();
            return open;
          },
          (error: unknown) => {
            this.failure = { error };
            stop();
            return false;
          },
        )
      : Promise.resolve(true);
  }

  /** The message's data, read only once the gate opened. */
  guard(data: Buffer): Readable {
    let asked = false;
    const opened = this.opened;
    return new Readable({
      read() {
        if (asked) return;
        asked = true;
        void opened.then((open) => {
          if (!open) return;
          this.push(data);
          this.push(null);
        });
      },
    });
  }

  /** Resolves once the gate answered; throws its error when it failed. */
  async settled(): Promise<void> {
    await this.opened;
    if (this.failure) throw this.failure.error;
  }
}

/** A reply to show for a connection that failed: the server's words when it said any. */
function connectionReply(error: unknown): string {
  const reply = parseSmtpReply(asSmtpError(error).response);
  return reply ? formatSmtpReply(reply) : describeSmtpError(error);
}

/**
 * One session's signal: the attempt's, or the gate's stop while the message's data has not been
 * read (once read, the session runs to its end: the server may be taking the message). watch()
 * names the message's stream; stop() ends the session as the gate's stop does; done() stops
 * listening to the gate.
 */
export function sessionSignal(
  attempt: AbortSignal,
  beforeData: AbortSignal | undefined,
): {
  signal: AbortSignal;
  watch(stream: Readable): Readable;
  stop: () => void;
  done(): void;
} {
  let data: Readable | undefined;
  const watch = (stream: Readable) => (data = stream);
  if (!beforeData) {
    return { signal: attempt, watch, stop: () => undefined, done: () => undefined };
  }
  const session = linkedSignal(attempt);
  const stop = () => {
    if (!data?.readableDidRead) session.abort();
  };
  if (beforeData.aborted) stop();
  else beforeData.addEventListener('abort', stop, { once: true });
  return {
    signal: session.signal,
    watch,
    stop,
    done: () => {
      beforeData.removeEventListener('abort', stop);
      session.unlink();
    },
  };
}
