import { isAscii } from 'node:buffer';
import type { Readable } from 'node:stream';

import SMTPConnection from 'nodemailer/lib/smtp-connection';

import type { SmtpTlsPolicy } from '../delivery.config';

export interface SmtpPoolOptions {
  port: number;
  heloName: string;
  tlsPolicy: SmtpTlsPolicy;
  maxConnectionsPerHost: number;
  maxMessagesPerConnection: number;
  idleMs: number;
  connectTimeoutMs: number;
  socketTimeoutMs: number;
}

/** Where to connect: an address, the MX host name it belongs to (TLS SNI, logs), plain or not. */
export interface SmtpEndpoint {
  address: string;
  host: string;
  /** True to skip STARTTLS (the opportunistic fallback after a failed handshake). */
  plain: boolean;
}

/** A connection that greeted, and its use count. */
export interface PooledConnection {
  readonly connection: SMTPConnection;
  readonly endpoint: SmtpEndpoint;
  /** True when this connection already carried a message (a failure may be a stale session). */
  readonly reused: boolean;
  /** Whether the session runs over TLS. */
  readonly secure: boolean;
}

interface Slot {
  key: string;
  connection: SMTPConnection;
  messages: number;
  idleTimer: NodeJS.Timeout | undefined;
  closed: boolean;
  /** Its place in the destination's count was given back. */
  released: boolean;
}

interface HostPool {
  idle: Slot[];
  open: number;
  waiters: Array<(granted: boolean) => void>;
}

export interface SmtpEnvelope {
  from: string;
  to: string[];
  /** MAIL FROM with BODY=8BITMIME (RFC 6152) when the server offers it. */
  use8BitMime?: boolean;
}

/** Whether the message has bytes over 127 (mail submitted over SMTP may): see use8BitMime. */
export function hasEightBitBytes(data: Buffer): boolean {
  return !isAscii(data);
}

export interface SmtpSendInfo {
  response: string;
  accepted: string[];
  rejected: string[];
  rejectedErrors: Array<{ recipient?: string; response?: string; responseCode?: number }>;
}

/** Thrown by acquire() when the signal aborts while waiting for a slot or connecting. */
export class SmtpAbortedError extends Error {
  constructor() {
    super('aborted');
    this.name = 'SmtpAbortedError';
  }
}

/**
 * Connections to recipients' mail servers, pooled per destination (address, port, TLS mode):
 * at most `maxConnectionsPerHost` open per destination, each reused for up to
 * `maxMessagesPerConnection` messages and closed (QUIT) after `idleMs` unused. Built on
 * nodemailer's SMTPConnection rather than its pool transport so that the caller knows how far a
 * failed session got: a failure before the message's data was read is safe to retry elsewhere
 * at once, one after it is not (the RFC 1047 window).
 */
export class SmtpPool {
  private readonly pools = new Map<string, HostPool>();
  private closed = false;
  /** Connections opened since start (for tests and metrics). */
  connectionsOpened = 0;

  constructor(private readonly options: SmtpPoolOptions) {}

  /**
   * A greeted connection to the endpoint: an idle pooled one, or a new one once the destination
   * has a free slot. Rejects with the connection error, or SmtpAbortedError.
   */
  async acquire(endpoint: SmtpEndpoint, signal: AbortSignal): Promise<PooledConnection> {
    if (this.closed) throw new Error('the SMTP pool is closed');
    const key = poolKey(endpoint);
    const pool = this.poolOf(key);
    for (;;) {
      if (signal.aborted) throw new SmtpAbortedError();
      const slot = pool.idle.pop();
      if (slot) {
        clearTimeout(slot.idleTimer);
        if (slot.closed) {
          this.releaseSlot(slot);
          continue;
        }
        return this.lease(slot, endpoint, true);
      }
      if (pool.open < this.options.maxConnectionsPerHost) break;
      const granted = await new Promise<boolean>((resolve) => {
        const onAbort = () => {
          pool.waiters.splice(pool.waiters.indexOf(grant), 1);
          resolve(false);
        };
        const grant = (ok: boolean) => {
          signal.removeEventListener('abort', onAbort);
          resolve(ok);
        };
        pool.waiters.push(grant);
        signal.addEventListener('abort', onAbort, { once: true });
      });
      if (!granted) throw new SmtpAbortedError();
    }
    pool.open++;
    try {
      const connection = await this.connect(endpoint, signal);
      this.connectionsOpened++;
      const slot: Slot = {
        key,
        connection,
        messages: 0,
        idleTimer: undefined,
        closed: false,
        released: false,
      };
      connection.once('end', () => {
        slot.closed = true;
        // The server ended an idle session (its timeout): its place is free again.
        const index = pool.idle.indexOf(slot);
        if (index >= 0) {
          pool.idle.splice(index, 1);
          clearTimeout(slot.idleTimer);
          this.releaseSlot(slot);
        }
      });
      return this.lease(slot, endpoint, false);
    } catch (error) {
      this.release(key);
      throw error;
    }
  }

  /**
   * Sends one message on a leased connection. `message` is read only once the server has
   * accepted DATA: whether it was read tells how far a failed session got. When `signal` aborts
   * first, the connection is closed and the send rejects with SmtpAbortedError at once
   * (nodemailer never calls back for a session closed mid-command).
   */
  send(
    leased: PooledConnection,
    envelope: SmtpEnvelope,
    message: Readable,
    signal: AbortSignal,
  ): Promise<SmtpSendInfo> {
    return new Promise((resolve, reject) => {
      let settled = false;
      const onAbort = () => {
        if (settled) return;
        settled = true;
        leased.connection.close();
        reject(new SmtpAbortedError());
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      leased.connection.send(envelope, message, (error, info) => {
        signal.removeEventListener('abort', onAbort);
        if (settled) return;
        settled = true;
        if (error) reject(error);
        else
          resolve({
            response: info.response ?? '',
            accepted: info.accepted ?? [],
            rejected: info.rejected ?? [],
            rejectedErrors: info.rejectedErrors ?? [],
          });
      });
    });
  }

  /**
   * Returns a connection after a successful send, for the next message; `healthy: false` closes
   * it (after any failure: the session's state is unknown).
   */
  giveBack(leased: PooledConnection, healthy: boolean): void {
    const slot = (leased as LeasedConnection).slot;
    const key = slot.key;
    slot.messages++;
    if (
      this.closed ||
      !healthy ||
      slot.closed ||
      slot.messages >= this.options.maxMessagesPerConnection
    ) {
      this.discard(slot, healthy);
      return;
    }
    const pool = this.poolOf(key);
    slot.idleTimer = setTimeout(() => {
      const index = pool.idle.indexOf(slot);
      if (index >= 0) pool.idle.splice(index, 1);
      this.discard(slot, true);
    }, this.options.idleMs);
    slot.idleTimer.unref();
    const waiter = pool.waiters.shift();
    pool.idle.push(slot);
    // A waiter takes the idle connection on its next turn.
    waiter?.(true);
  }

  /** Open connections per destination (idle and in use). */
  openConnections(): number {
    let open = 0;
    for (const pool of this.pools.values()) open += pool.open;
    return open;
  }

  /** Closes idle connections (QUIT) and refuses new work; connections in use close when given back. */
  close(): void {
    this.closed = true;
    for (const pool of [...this.pools.values()]) {
      for (const slot of pool.idle.splice(0)) {
        clearTimeout(slot.idleTimer);
        this.discard(slot, true);
      }
      for (const waiter of pool.waiters.splice(0)) waiter(false);
    }
  }

  private lease(slot: Slot, endpoint: SmtpEndpoint, reused: boolean): PooledConnection {
    const leased: LeasedConnection = {
      connection: slot.connection,
      endpoint,
      reused,
      secure: slot.connection.secure,
      slot,
    };
    return leased;
  }

  private discard(slot: Slot, polite: boolean): void {
    if (!slot.closed) {
      slot.closed = true;
      if (polite) slot.connection.quit();
      else slot.connection.close();
    }
    this.releaseSlot(slot);
  }

  private releaseSlot(slot: Slot): void {
    if (slot.released) return;
    slot.released = true;
    this.release(slot.key);
  }

  /** A slot of the destination is free again: wake one waiter (it opens or takes a connection). */
  private release(key: string): void {
    const pool = this.pools.get(key);
    if (!pool) return;
    pool.open = Math.max(0, pool.open - 1);
    const waiter = pool.waiters.shift();
    if (waiter) waiter(true);
    else if (pool.open === 0 && pool.idle.length === 0) this.pools.delete(key);
  }

  private poolOf(key: string): HostPool {
    let pool = this.pools.get(key);
    if (!pool) {
      pool = { idle: [], open: 0, waiters: [] };
      this.pools.set(key, pool);
    }
    return pool;
  }

  private connect(endpoint: SmtpEndpoint, signal: AbortSignal): Promise<SMTPConnection> {
    const policy = this.options.tlsPolicy;
    const connection = new SMTPConnection({
      host: endpoint.address,
      port: this.options.port,
      secure: false,
      name: this.options.heloName,
      ignoreTLS: policy === 'disabled' || endpoint.plain,
      requireTLS: policy === 'required',
      opportunisticTLS: policy === 'opportunistic',
      // Mail servers' certificates are rarely valid for their MX names: opportunistic TLS
      // encrypts without authenticating (RFC 7435), as MTAs do without MTA-STS or DANE.
      tls: { rejectUnauthorized: false, servername: endpoint.host, minVersion: 'TLSv1.2' },
      servername: endpoint.host,
      connectionTimeout: this.options.connectTimeoutMs,
      greetingTimeout: this.options.connectTimeoutMs,
      socketTimeout: this.options.socketTimeoutMs,
      logger: false,
    });
    return new Promise((resolve, reject) => {
      let settled = false;
      const settle = (error: Error | null) => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        if (error) {
          connection.close();
          reject(error);
        } else resolve(connection);
      };
      const onAbort = () => settle(new SmtpAbortedError());
      signal.addEventListener('abort', onAbort, { once: true });
      // Errors after the session is up reach the callbacks of send(); this keeps them from
      // becoming uncaught 'error' events.
      connection.on('error', (error: Error) => settle(error));
      connection.connect((error?: Error | null) => settle(error ?? null));
    });
  }
}

interface LeasedConnection extends PooledConnection {
  slot: Slot;
}

function poolKey(endpoint: SmtpEndpoint): string {
  return `${endpoint.address}|${endpoint.host}|${endpoint.plain ? 'plain' : 'tls'}`;
}
