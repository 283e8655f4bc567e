import net from 'node:net';
import tls from 'node:tls';

const REPLY_TIMEOUT_MS = 10_000;

export interface SmtpWireReply {
  code: number;
  /** Every line of the reply, without the CRLF. */
  lines: string[];
  /** The last line, e.g. `535 5.7.8 Authentication credentials invalid`. */
  text: string;
}

/**
 * A raw SMTP client for probing the server: it writes exactly the bytes it is given (bare LFs,
 * pipelined commands, over-long lines) and reads replies line by line.
 */
export class SmtpWireClient {
  private buffer = '';
  private waiter: (() => void) | undefined;
  private closedFlag = false;
  readonly closed: Promise<void>;

  private constructor(private socket: net.Socket) {
    this.closed = new Promise((resolve) => {
      const onClose = () => {
        this.closedFlag = true;
        this.waiter?.();
        resolve();
      };
      socket.once('close', onClose);
    });
    this.listen(socket);
  }

  static async connect(
    port: number,
    /** `localAddress`: another loopback address to connect from (127.0.0.1 by default). */
    options: { implicitTls?: boolean; localAddress?: string } = {},
  ): Promise<SmtpWireClient> {
    const from = options.localAddress ? { localAddress: options.localAddress } : {};
    const socket = await new Promise<net.Socket>((resolve, reject) => {
      const connected: net.Socket = options.implicitTls
        ? tls.connect({ host: '127.0.0.1', port, ...from, rejectUnauthorized: false }, () =>
            resolve(connected),
          )
        : net.connect({ host: '127.0.0.1', port, ...from }, () => resolve(connected));
      connected.once('error', reject);
    });
    socket.on('error', () => undefined);
    return new SmtpWireClient(socket);
  }

  get isClosed(): boolean {
    return this.closedFlag;
  }

  write(data: string | Buffer): void {
    this.socket.write(data);
  }

  /** Sends one command line (CRLF added) and reads its reply. */
  async command(line: string): Promise<SmtpWireReply> {
    this.write(`${line}\r\n`);
    return this.reply();
  }

  /** The next complete reply; throws when the connection closes first or after a timeout. */
  async reply(timeoutMs = REPLY_TIMEOUT_MS): Promise<SmtpWireReply> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const reply = this.takeReply();
      if (reply) return reply;
      if (this.closedFlag)
        throw new Error(`connection closed; unread: ${JSON.stringify(this.buffer)}`);
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(`no reply within ${timeoutMs} ms; unread: ${JSON.stringify(this.buffer)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiter = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.waiter = undefined;
    }
  }

  /** EHLO, STARTTLS, the handshake and EHLO again; returns the capabilities after TLS. */
  async startTls(): Promise<SmtpWireReply> {
    await this.command('EHLO client.example');
    const ready = await this.command('STARTTLS');
    if (ready.code !== 220) throw new Error(`STARTTLS refused: ${ready.text}`);
    await this.upgrade();
    return this.command('EHLO client.example');
  }

  /** Wraps the socket in TLS (after a 220 to STARTTLS). */
  async upgrade(): Promise<void> {
    const plain = this.socket;
    plain.removeAllListeners('data');
    const secure = await new Promise<tls.TLSSocket>((resolve, reject) => {
      const upgraded = tls.connect({ socket: plain, rejectUnauthorized: false }, () =>
        resolve(upgraded),
      );
      upgraded.once('error', reject);
    });
    secure.on('error', () => undefined);
    this.socket = secure;
    this.listen(secure);
  }

  /** Waits until the server closes the connection. */
  async waitClosed(timeoutMs = REPLY_TIMEOUT_MS): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`still open after ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([this.closed, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  close(): void {
    this.socket.destroy();
  }

  private listen(socket: net.Socket): void {
    socket.on('data', (chunk: Buffer) => {
      this.buffer += chunk.toString('latin1');
      this.waiter?.();
    });
  }

  private takeReply(): SmtpWireReply | null {
    const lines: string[] = [];
    let offset = 0;
    for (;;) {
      const end = this.buffer.indexOf('\r\n', offset);
      if (end < 0) return null;
      const line = this.buffer.slice(offset, end);
      lines.push(line);
      offset = end + 2;
      if (/^\d{3}(?!-)/.test(line)) {
        this.buffer = this.buffer.slice(offset);
        return { code: Number(line.slice(0, 3)), lines, text: line };
      }
    }
  }
}
