import type net from 'node:net';
import type tls from 'node:tls';

import { SMTPServer, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server';
import { SMTPConnection } from 'smtp-server/lib/smtp-connection';

/** What the sink received and answered 250 to. */
export interface SinkReceipt {
  mailFrom: string;
  /** MAIL FROM's BODY parameter (`8BITMIME`, …), when given. */
  body?: string;
  rcptTo: string[];
  raw: Buffer;
  secure: boolean;
  receivedAt: number;
}

/**
 * How the sink greets and answers MAIL FROM (for every session, until changed): `drop-greeting`
 * closes the connection before greeting, `stall-greeting` never greets (the client's greeting
 * timeout ends it), `421-greeting` refuses, `drop-mail` closes the connection at MAIL FROM.
 */
export type SessionMode =
  'normal' | 'drop-greeting' | 'stall-greeting' | '421-greeting' | 'drop-mail';

class SinkError extends Error {
  constructor(
    readonly responseCode: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * smtp-server waits 100 ms before every greeting (to catch clients that talk too soon). This
 * sink greets at once, so that a test's sessions are not dominated by that wait: the stock
 * connect() without the timer (smtp-server 3.21.6: SMTPServer.connect / SMTPConnection.init).
 */
class PromptSmtpServer extends SMTPServer {
  override connect(socket: net.Socket | tls.TLSSocket, socketOptions?: object | null): void {
    const connection = new SMTPConnection(this, socket, socketOptions ?? null);
    this.connections.add(connection);
    connection.on('error', (error: Error) => this._onError(error));
    connection.on('connect', (data: Parameters<SMTPServer['_onClientConnect']>[0]) =>
      this._onClientConnect(data),
    );
    connection._setListeners(() => connection.connectionReady());
  }
}

/**
 * A fake MX on loopback (real smtp-server), scripted by the first recipient's local part:
 * `defer<N>-…` answers 451 4.3.0 to RCPT the first N times for that address, then accepts;
 * `reject-…` 550 5.1.1; `close421-…` 421 4.4.2 and closes; `slowrcpt<ms>-…` accepts RCPT TO
 * after ms; `droprcpt-…` closes the connection at RCPT TO without a reply; `dropmid-…` closes it when the first part of the data arrives (before
 * the final dot); `dropdata-…` closes it after the data without a reply; `stall-…` never answers
 * the data; `slow<ms>-…` answers 250 after ms; anything else is accepted. Session-wide modes drop,
 * stall or refuse at the greeting or drop at MAIL FROM.
 */
export class SmtpSink {
  readonly receipts: SinkReceipt[] = [];
  /** Sessions opened, and those that went through STARTTLS. */
  connections = 0;
  mode: SessionMode = 'normal';
  private readonly deferrals = new Map<string, number>();
  private readonly server: PromptSmtpServer;
  private readonly listeners: Array<() => void> = [];
  private readonly finalDotListeners: Array<(rcptTo: string[]) => void> = [];

  private constructor(
    readonly host: string,
    readonly offersTls: boolean,
  ) {
    const options: SMTPServerOptions = {
      authOptional: true,
      disableReverseLookup: true,
      hideSTARTTLS: !offersTls,
      logger: false,
      size: 50 * 1024 * 1024,
      onConnect: (session, callback) => this.onConnect(session, callback),
      onMailFrom: (_address, session, callback) => this.onMailFrom(session, callback),
      onRcptTo: (address, session, callback) => this.onRcptTo(address.address, session, callback),
      onData: (stream, session, callback) => this.onData(stream, session, callback),
    };
    this.server = new PromptSmtpServer(options);
    this.server.on('error', () => undefined);
  }

  /** Listens on host:port (a loopback address; every sink of a test shares the port). */
  static async start(host: string, port: number, offersTls = true): Promise<SmtpSink> {
    const sink = new SmtpSink(host, offersTls);
    await new Promise<void>((resolve, reject) => {
      sink.server.server.once('error', reject);
      sink.server.listen(port, host, () => resolve());
    });
    return sink;
  }

  /** Calls back whenever a message is received (after the 250). */
  onReceipt(listener: () => void): void {
    this.listeners.push(listener);
  }

  /**
   * Calls back the moment a message's final dot arrives, before the sink answers it (or drops or
   * stalls): from then on the message may have been received, whatever the client learns.
   */
  onFinalDot(listener: (rcptTo: string[]) => void): void {
    this.finalDotListeners.push(listener);
  }

  /** TCP connections open now (any state: greeting, session, STARTTLS, closing by the server). */
  openConnections(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.server.getConnections((error, count) => (error ? reject(error) : resolve(count)));
    });
  }

  receiptsFor(recipient: string): SinkReceipt[] {
    return this.receipts.filter((receipt) => receipt.rcptTo.includes(recipient));
  }

  async stop(): Promise<void> {
    for (const connection of this.server.connections) connection._socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private drop(session: SMTPServerSession): void {
    for (const connection of this.server.connections) {
      if (connection.id === session.id) connection._socket.destroy();
    }
  }

  private onConnect(session: SMTPServerSession, callback: (error?: Error | null) => void): void {
    this.connections++;
    if (this.mode === 'drop-greeting') return this.drop(session);
    if (this.mode === 'stall-greeting') return;
    if (this.mode === '421-greeting') return callback(new SinkError(421, 'Too busy, try later'));
    callback();
  }

  private onMailFrom(session: SMTPServerSession, callback: (error?: Error | null) => void): void {
    if (this.mode === 'drop-mail') return this.drop(session);
    callback();
  }

  private onRcptTo(
    address: string,
    session: SMTPServerSession,
    callback: (error?: Error | null) => void,
  ): void {
    const local = address.split('@')[0] ?? '';
    if (local.startsWith('droprcpt-')) return this.drop(session);
    const defer = /^defer([0-9]+)-/.exec(local);
    if (defer) {
      const seen = this.deferrals.get(address) ?? 0;
      if (seen < Number(defer[1])) {
        this.deferrals.set(address, seen + 1);
        return callback(new SinkError(451, '4.3.0 Try again later'));
      }
    }
    if (local.startsWith('reject-')) return callback(new SinkError(550, '5.1.1 No such user'));
    if (local.startsWith('close421-')) return callback(new SinkError(421, '4.4.2 Closing'));
    const slow = /^slowrcpt([0-9]+)-/.exec(local);
    if (slow) {
      setTimeout(() => callback(), Number(slow[1]));
      return;
    }
    callback();
  }

  private onData(
    stream: NodeJS.ReadableStream,
    session: SMTPServerSession,
    callback: (error?: Error | null) => void,
  ): void {
    const chunks: Buffer[] = [];
    const rcptTo = session.envelope.rcptTo.map((rcpt) => rcpt.address);
    const local = rcptTo[0]?.split('@')[0] ?? '';
    let dropped = false;
    // A connection closed mid-message ends the stream with an error (smtp-server 3.21).
    stream.on('error', () => undefined);
    stream.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (local.startsWith('dropmid-') && !dropped) {
        dropped = true;
        this.drop(session);
      }
    });
    stream.on('end', () => {
      if (dropped) return;
      for (const listener of this.finalDotListeners) listener(rcptTo);
      if (local.startsWith('dropdata-')) return this.drop(session);
      if (local.startsWith('stall-')) return;
      const accept = () => {
        const mailFrom = session.envelope.mailFrom;
        const body: unknown = mailFrom ? mailFrom.args && mailFrom.args['BODY'] : undefined;
        this.receipts.push({
          mailFrom: mailFrom ? mailFrom.address : '',
          ...(typeof body === 'string' ? { body } : {}),
          rcptTo,
          raw: Buffer.concat(chunks),
          secure: session.secure,
          receivedAt: Date.now(),
        });
        callback();
        for (const listener of this.listeners) listener();
      };
      const slow = /^slow([0-9]+)-/.exec(local);
      if (slow) setTimeout(accept, Number(slow[1]));
      else accept();
    });
  }
}
