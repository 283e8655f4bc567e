import { readFileSync } from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';

import { e2eEnvironment } from './environment';

export interface RawTarget {
  port?: number;
  /** Source address of the connection (any 127.0.0.0/8 address). */
  localAddress?: string;
}

/** What the peer did with a raw connection. */
export interface RawOutcome {
  /** Everything the server sent. */
  text: string;
  /** How long the connection stayed open. */
  openMs: number;
  /** Whether the server completed a TLS handshake (never on a plain TCP connection). */
  tlsEstablished: boolean;
  /** A socket error seen before the close (EPIPE, ECONNRESET), if any. */
  error?: string;
}

/** How long a test waits for the server to close a connection it should close. */
const OUTCOME_TIMEOUT_MS = 30_000;

/**
 * A TLS connection to the gateway that behaves as the test says, below any HTTP client: it sends
 * what `drive` writes, and resolves once the server closes the connection (or after 30 s, with
 * `openMs` saying so).
 */
export function rawTls(
  drive: (socket: tls.TLSSocket) => void,
  target: RawTarget = {},
  socketOptions: { allowHalfOpen?: boolean } = {},
): Promise<RawOutcome> {
  const environment = e2eEnvironment();
  const allowHalfOpen = socketOptions.allowHalfOpen ?? false;
  // allowHalfOpen: Node's TLSSocket honours it, though its typings leave it out.
  const options: tls.ConnectionOptions & { allowHalfOpen: boolean } = {
    socket: net.connect({
      host: '127.0.0.1',
      port: target.port ?? environment.httpsPort,
      localAddress: target.localAddress,
      allowHalfOpen,
    }),
    ca: readFileSync(environment.caFile),
    servername: 'localhost',
    allowHalfOpen,
  };
  const socket = tls.connect(options);
  socket.once('secureConnect', () => drive(socket));
  return outcome(socket);
}

/** A plain TCP connection to the gateway's port that sends only what `drive` writes. */
export function rawTcp(
  drive: (socket: net.Socket) => void,
  target: RawTarget = {},
): Promise<RawOutcome> {
  const socket = net.connect({
    host: '127.0.0.1',
    port: target.port ?? e2eEnvironment().httpsPort,
    localAddress: target.localAddress,
  });
  socket.once('connect', () => drive(socket));
  return outcome(socket);
}

function outcome(socket: net.Socket): Promise<RawOutcome> {
  const started = Date.now();
  const chunks: Buffer[] = [];
  let error: string | undefined;
  let tlsEstablished = false;
  socket.once('secureConnect', () => (tlsEstablished = true));
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.on('error', (cause: NodeJS.ErrnoException) => (error ??= cause.code ?? cause.message));
  return new Promise((resolve) => {
    const timer = setTimeout(() => socket.destroy(), OUTCOME_TIMEOUT_MS);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve({
        text: Buffer.concat(chunks).toString('latin1'),
        openMs: Date.now() - started,
        tlsEstablished,
        error,
      });
    });
  });
}

/** Status and parsed JSON body of the first HTTP response in `text`. */
export function parseResponse(text: string): { status: number; body: unknown; head: string } {
  const split = text.indexOf('\r\n\r\n');
  const head = split < 0 ? text : text.slice(0, split);
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
  const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? -1);
  const rest = split < 0 ? '' : text.slice(split + 4);
  const raw = length >= 0 ? rest.slice(0, length) : rest;
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    body = undefined;
  }
  return { status, body, head };
}

/** Writes an HTTP request and keeps the connection open (the server decides when to close). */
export function sendText(text: string): (socket: net.Socket) => void {
  return (socket) => {
    socket.write(text);
  };
}
