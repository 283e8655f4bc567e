import { readFileSync } from 'node:fs';

import { pollUntil } from '@envoi/shared-testing';
import WebSocket from 'ws';

import { e2eEnvironment } from './environment';

/** A frame as the reference CLI reads it (internal/client/websocket.go); `Data`: the payload. */
export interface StreamFrame<Data> {
  type: string;
  event?: {
    type: string;
    stream_id: string;
    account_id: string;
    data: Data;
    metadata: Record<string, string>;
    timestamp: number;
  };
  session_id?: string;
  stream?: string;
  timestamp: number;
}

/** The refusal of a handshake: its status and `{message}` body. */
export class HandshakeRefused extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`handshake refused: ${status} ${body}`);
  }
}

/**
 * A WebSocket client connecting the way `ahasend webhooks listen` and `ahasend routes listen`
 * do (platform notes 1.12), keeping every frame and ping.
 */
export class StreamListener<Data> {
  readonly frames: Array<StreamFrame<Data>> = [];
  pings = 0;
  closed: { code: number; reason: string } | undefined;

  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (data: WebSocket.RawData) => {
      const bytes = Array.isArray(data)
        ? Buffer.concat(data)
        : Buffer.isBuffer(data)
          ? data
          : Buffer.from(new Uint8Array(data));
      this.frames.push(JSON.parse(bytes.toString('utf8')) as StreamFrame<Data>);
    });
    socket.on('ping', () => {
      this.pings++;
    });
    socket.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
    });
  }

  static connect<Data>(wsUrl: string, key: string, force = false): Promise<StreamListener<Data>> {
    const url = new URL(wsUrl);
    url.searchParams.set('api_secret_key', key);
    if (force) url.searchParams.set('force_reconnect', 'true');
    const socket = new WebSocket(url, {
      ca: readFileSync(e2eEnvironment().caFile),
      handshakeTimeout: 10_000,
    });
    const listener = new StreamListener<Data>(socket);
    return new Promise((resolve, reject) => {
      socket.once('open', () => resolve(listener));
      socket.once('unexpected-response', (_request, response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          reject(
            new HandshakeRefused(response.statusCode ?? 0, Buffer.concat(chunks).toString('utf8')),
          ),
        );
      });
      socket.once('error', reject);
    });
  }

  events(): Array<StreamFrame<Data>> {
    return this.frames.filter((frame) => frame.type === 'event' || frame.type === 'replay');
  }

  /** The event frames once `count` arrived (at most `timeoutMs`). */
  until(count: number, what: string, timeoutMs = 20_000): Promise<Array<StreamFrame<Data>>> {
    return pollUntil(
      () => this.events(),
      (events) => events.length >= count,
      { what, timeoutMs },
    );
  }

  /** The first frame (the server's `connected`), once it came. */
  async firstFrame(): Promise<StreamFrame<Data>> {
    const [first] = await pollUntil(
      () => this.frames,
      (frames) => frames.length > 0,
      { what: 'the connected frame' },
    );
    if (!first) throw new Error('no frame');
    return first;
  }

  /** Once the server pinged. */
  async untilPinged(): Promise<void> {
    await pollUntil(
      () => this.pings,
      (pings) => pings > 0,
      { what: 'a ping' },
    );
  }

  /** How it was closed, once it was (at most 20 s). */
  async untilClosed(what: string): Promise<{ code: number; reason: string }> {
    const closed = await pollUntil(
      () => this.closed,
      (value) => value !== undefined,
      { what },
    );
    if (!closed) throw new Error(`${what}: not closed`);
    return closed;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    const closing = new Promise<void>((resolve) => this.socket.once('close', () => resolve()));
    this.socket.close(1000, 'done');
    await closing;
  }
}

/** The refusal of a handshake expected to be refused (its listener closed if it was not). */
export async function refusal(
  connecting: Promise<StreamListener<unknown>>,
): Promise<HandshakeRefused> {
  const outcome = await connecting.then(
    async (listener) => {
      await listener.close();
      return new Error('the handshake succeeded');
    },
    (error: unknown) => error,
  );
  if (!(outcome instanceof HandshakeRefused)) throw outcome;
  return outcome;
}
