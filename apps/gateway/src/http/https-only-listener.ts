import net from 'node:net';
import type { Server as TlsServer } from 'node:tls';

import { canonicalIp, isIpAllowed } from '@envoi/shared-net';

import { protocolErrorResponse } from './protocol-errors';

const TLS_HANDSHAKE_RECORD = 0x16;
const PLAIN_HTTP_REFUSAL = protocolErrorResponse(
  {
    status: 400,
    reason: 'Bad Request',
    message: 'this API is served over HTTPS only; plain HTTP requests are refused',
  },
  '/',
);

export interface ListenerLimits {
  /** How long a new connection may stay silent before its first byte (TLS handshake start). */
  firstByteTimeoutMs: number;
  maxConnectionsPerIp: number;
  maxConnections: number;
  /** Addresses or CIDRs without a per-IP limit: the trusted proxies clients come through. */
  unlimitedAddresses: string[];
}

/** Open connections per client address, so one address cannot take every socket. */
class ConnectionCounts {
  private readonly perIp = new Map<string, number>();
  private total = 0;

  private readonly unlimited: string[];

  constructor(private readonly limits: ListenerLimits) {
    this.unlimited = limits.unlimitedAddresses.map((entry) =>
      entry.includes('/') ? entry : `${entry}/${entry.includes(':') ? 128 : 32}`,
    );
  }

  /** Counts the socket in until it closes; false when a limit is reached. */
  admit(socket: net.Socket): boolean {
    const ip = canonicalIp(socket.remoteAddress ?? '') ?? socket.remoteAddress ?? '';
    const open = this.perIp.get(ip) ?? 0;
    const unlimited = this.unlimited.length > 0 && isIpAllowed(ip, this.unlimited);
    if (
      (open >= this.limits.maxConnectionsPerIp && !unlimited) ||
      this.total >= this.limits.maxConnections
    ) {
      return false;
    }
    this.perIp.set(ip, open + 1);
    this.total += 1;
    socket.once('close', () => {
      this.total -= 1;
      const left = (this.perIp.get(ip) ?? 1) - 1;
      if (left > 0) this.perIp.set(ip, left);
      else this.perIp.delete(ip);
    });
    return true;
  }
}

/**
 * Listens on one port for the HTTPS server. The first byte of each connection tells a TLS
 * handshake from anything else: TLS goes to the server, plain HTTP gets a clear 400 and is closed.
 * Connections over the per-IP or total limit are closed at once; the TLS server's own timeouts
 * take over from the first byte.
 */
export function listenHttpsOnly(
  tlsServer: TlsServer,
  port: number,
  host: string,
  limits: ListenerLimits,
): Promise<net.Server> {
  const counts = new ConnectionCounts(limits);
  const listener = net.createServer({ pauseOnConnect: true }, (socket) => {
    socket.on('error', () => socket.destroy());
    if (!counts.admit(socket)) {
      socket.destroy();
      return;
    }
    socket.setTimeout(limits.firstByteTimeoutMs, () => socket.destroy());
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      socket.setTimeout(0);
      socket.unshift(chunk);
      if (chunk[0] === TLS_HANDSHAKE_RECORD) {
        // The TLS socket takes over and reads the unshifted bytes itself; resuming here would
        // steal them.
        tlsServer.emit('connection', socket);
      } else {
        socket.end(PLAIN_HTTP_REFUSAL);
      }
    });
    socket.resume();
  });
  return new Promise((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(port, host, () => {
      listener.off('error', reject);
      // The HTTPS server never listens itself, and Node starts checking its connections against
      // the headers and request timeouts only when it hears that it does.
      tlsServer.emit('listening');
      resolve(listener);
    });
  });
}
