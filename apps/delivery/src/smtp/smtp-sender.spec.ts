import { generateKeyPairSync } from 'node:crypto';

import { findFreePort, pollUntil, SmtpSink } from '@envoi/shared-testing';

import { SmtpPool } from './smtp-pool';
import { type OutboundMessage, type SendResult, type SessionGate, SmtpSender } from './smtp-sender';

const HOST = '127.0.0.1';
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });

/** A gate whose answer the test gives; a refusal stops the sessions, as AttemptGate's does. */
class ScriptedGate implements SessionGate {
  opens = 0;
  private readonly stop = new AbortController();
  private answer: ((open: boolean | Error) => void) | undefined;

  get beforeData(): AbortSignal {
    return this.stop.signal;
  }

  open(): Promise<boolean> {
    this.opens++;
    return new Promise((resolve, reject) => {
      this.answer = (open) => {
        if (open instanceof Error) return reject(open);
        if (!open) this.stop.abort();
        resolve(open);
      };
    });
  }

  /** Answers the pending open(), once it was called. */
  async say(open: boolean | Error): Promise<void> {
    await pollUntil(
      () => this.answer,
      (answer) => answer !== undefined,
      { timeoutMs: 5_000, intervalMs: 5, what: 'the gate to be asked' },
    );
    this.answer?.(open);
  }
}

function message(to: string): OutboundMessage {
  return {
    envelope: { from: 'bounce@sender.test', to: [to] },
    raw: Buffer.from(
      `From: a@sender.test\r\nTo: ${to}\r\nSubject: gate\r\nMessage-ID: <1@sender.test>\r\n\r\nhello\r\n`,
    ),
    dkim: { domainName: 'sender.test', keySelector: 's1', privateKey },
  };
}

describe('SmtpSender with a session gate', () => {
  let sink: SmtpSink;
  let pool: SmtpPool;
  let sender: SmtpSender;

  beforeEach(async () => {
    const port = await findFreePort();
    sink = await SmtpSink.start(HOST, port, false);
    pool = new SmtpPool({
      port,
      heloName: 'envoi.test',
      tlsPolicy: 'disabled',
      maxConnectionsPerHost: 1,
      maxMessagesPerConnection: 10,
      idleMs: 60_000,
      connectTimeoutMs: 5_000,
      socketTimeoutMs: 5_000,
    });
    sender = new SmtpSender(pool, { maxAddresses: 1, plainFallback: false });
  });

  afterEach(async () => {
    pool.close();
    await sink.stop();
  });

  const send = (to: string, gate: SessionGate) =>
    sender.send(
      [{ host: 'mx.test', addresses: [HOST] }],
      message(to),
      new AbortController().signal,
      gate,
    );

  it('sends the data once the gate opens, and keeps the connection', async () => {
    const gate = new ScriptedGate();
    const sent = send('a@rcpt.test', gate);
    await gate.say(true);
    await expect(sent).resolves.toMatchObject({ kind: 'accepted' });
    expect(sink.receipts.map((receipt) => receipt.rcptTo)).toEqual([['a@rcpt.test']]);
    expect(gate.opens).toBe(1);
    expect(pool.openConnections()).toBe(1);
  });

  it('sends no data when the gate refuses, and ends the attempt as aborted before data', async () => {
    const gate = new ScriptedGate();
    const sent = send('a@rcpt.test', gate);
    await gate.say(false);
    await expect(sent).resolves.toEqual({ kind: 'aborted', host: 'mx.test', dataSent: false });
    expect(sink.receipts).toEqual([]);
    expect(pool.openConnections()).toBe(0);
  });

  it('sends no data when the gate fails, and throws its error', async () => {
    const gate = new ScriptedGate();
    const sent = send('a@rcpt.test', gate);
    await gate.say(new Error('database down'));
    await expect(sent).rejects.toThrow('database down');
    expect(sink.receipts).toEqual([]);
    expect(pool.openConnections()).toBe(0);
  });

  it('gives the result of a session refused at RCPT only once the gate answered', async () => {
    const gate = new ScriptedGate();
    let result: SendResult | undefined;
    const sent = send('reject-a@rcpt.test', gate).then((value) => (result = value));
    // The session ended (its connection closed) while the gate was still deciding.
    await pollUntil(
      () => sink.openConnections(),
      (open) => open === 0 && sink.connections === 1,
      { timeoutMs: 5_000, intervalMs: 5, what: 'the refused session to close' },
    );
    expect(result).toBeUndefined();
    await gate.say(true);
    await sent;
    expect(result).toMatchObject({ kind: 'refused' });
  });
});
