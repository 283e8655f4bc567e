import type { Socket } from 'node:net';

import type { FastifyReply, FastifyRequest } from 'fastify';

const DRAINING = new WeakSet<Socket>();

/**
 * An answer given before the request body was read (413 for a body over the limit) closes the
 * connection, and a socket closed while the client is still uploading resets: the client gets
 * EPIPE and never reads the answer. So the gateway only ends its sending side once the answer is
 * out, reads and discards the rest of the upload, and closes when the client has finished — or
 * when `drainMs` has passed, whichever comes first.
 */
export function drainUnreadBodyOnClose(
  request: FastifyRequest,
  reply: FastifyReply,
  drainMs: number,
): void {
  const incoming = request.raw;
  if (incoming.complete || reply.getHeader('connection') !== 'close') return;
  const socket = incoming.socket;
  if (DRAINING.has(socket) || socket.destroyed) return;
  DRAINING.add(socket);
  // Node calls destroySoon() on a closing connection once the answer is written.
  socket.destroySoon = () => {
    if (socket.writable) socket.end();
  };
  incoming.resume();
  const bound = setTimeout(() => socket.destroy(), drainMs);
  socket.once('close', () => clearTimeout(bound));
  // The client has sent everything it will and closed its side.
  socket.once('end', () => socket.destroy());
}
