import type { RpcClient } from '@envoi/shared-nats';
import type { Logger } from '@envoi/shared-observability';
import type { WebSocket } from 'ws';

import { connectedFrame, eventFrame, type StreamFrame, type StreamListener } from './stream-frames';

/** Events read per request, and requests per pump before it yields to the next notification. */
const READ_LIMIT = 100;
const MAX_READS_PER_PUMP = 50;

/** Close codes of the 4000 range (application-defined). */
export const CLOSE_CODES = {
  /** Another listener attached with force_reconnect=true. */
  replaced: 4000,
  /** The listener stopped answering pings. */
  unresponsive: 4001,
  /** The gateway is shutting down. */
  goingAway: 1001,
} as const;

export interface ListenerSessionOptions {
  rpc: RpcClient;
  logger: Logger;
  pingIntervalMs: number;
  /** How long the attachment holds without a renewal (each ping renews it). */
  leaseMs: number;
}

/**
 * One listener on one webhook's or route's stream: the buffered events after the last one written, as
 * frames, acknowledged once written (so what was not written is replayed to the next listener);
 * a ping each interval, which also renews the attachment; closed when it stops answering or when
 * another listener replaces it.
 */
export class ListenerSession {
  private lastWrittenSeq = 0;
  private pumping: Promise<void> | undefined;
  private pumpAgain = false;
  private answeredPing = true;
  private closed = false;
  private readonly pingTimer: NodeJS.Timeout;

  constructor(
    private readonly socket: WebSocket,
    readonly listener: StreamListener,
    private readonly replayUntilSeq: number,
    private readonly options: ListenerSessionOptions,
    onClosed: (session: ListenerSession) => void,
  ) {
    socket.on('pong', () => {
      this.answeredPing = true;
    });
    socket.on('close', () => {
      this.stop();
      onClosed(this);
    });
    socket.on('error', (error) => {
      options.logger.debug({ err: error, targetId: listener.targetId }, 'stream socket error');
    });
    this.pingTimer = setInterval(() => this.ping(), options.pingIntervalMs);
    void this.write(connectedFrame(listener, new Date())).then(
      () => this.notify(),
      () => undefined,
    );
  }

  /** New events may be buffered: write them. */
  notify(): void {
    if (this.closed) return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = this.pump().finally(() => {
      this.pumping = undefined;
      if (this.pumpAgain) {
        this.pumpAgain = false;
        this.notify();
      }
    });
  }

  /** Another listener attached in its place. */
  replaced(): void {
    this.close(CLOSE_CODES.replaced, 'another listener attached to this stream (force_reconnect)');
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    this.stop();
    this.socket.close(code, reason);
  }

  private stop(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.pingTimer);
    const { kind, targetId, sessionId } = this.listener;
    this.options.rpc
      .request(kind.subjects.detach, { target_id: targetId, session_id: sessionId })
      .catch((error: unknown) => {
        this.options.logger.warn({ err: error, targetId }, 'stream detach failed');
      });
  }

  private ping(): void {
    if (!this.answeredPing) {
      this.close(CLOSE_CODES.unresponsive, 'the listener stopped answering pings');
      this.socket.terminate();
      return;
    }
    this.answeredPing = false;
    this.socket.ping();
    void this.acknowledge();
    // A notification lost on the bus is made up for here.
    this.notify();
  }

  private async pump(): Promise<void> {
    try {
      for (let reads = 0; reads < MAX_READS_PER_PUMP && !this.closed; reads++) {
        const page = await this.options.rpc.request(this.listener.kind.subjects.read, {
          target_id: this.listener.targetId,
          session_id: this.listener.sessionId,
          after_seq: this.lastWrittenSeq,
          limit: READ_LIMIT,
        });
        if (page.data.length === 0) return;
        const now = new Date();
        await Promise.all(
          page.data.map((record) =>
            this.write(eventFrame(this.listener, record, this.replayUntilSeq, now)),
          ),
        );
        this.lastWrittenSeq = page.data[page.data.length - 1]?.seq ?? this.lastWrittenSeq;
        await this.acknowledge();
        if (page.data.length < READ_LIMIT) return;
      }
      if (!this.closed) this.pumpAgain = true;
    } catch (error) {
      // Unwritten events stay buffered; the next notification or ping tries again.
      this.options.logger.warn(
        { err: error, targetId: this.listener.targetId },
        'stream read failed',
      );
    }
  }

  /** Drops what was written from the buffer and renews the attachment; closes when replaced. */
  private async acknowledge(): Promise<void> {
    if (this.closed) return;
    try {
      const answer = await this.options.rpc.request(this.listener.kind.subjects.ack, {
        target_id: this.listener.targetId,
        session_id: this.listener.sessionId,
        seq: this.lastWrittenSeq,
        lease_ms: this.options.leaseMs,
      });
      if (!answer.attached) this.replaced();
    } catch (error) {
      this.options.logger.warn(
        { err: error, targetId: this.listener.targetId },
        'stream acknowledgement failed',
      );
    }
  }

  /** Resolves once the frame was handed to the socket; rejects when it could not be. */
  private write(frame: StreamFrame): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(new Error('the listener is closed'));
      this.socket.send(JSON.stringify(frame), (error) => (error ? reject(error) : resolve()));
    });
  }
}
