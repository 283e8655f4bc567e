import net from 'node:net';
import type { Server as TlsServer } from 'node:tls';

const TLS_HANDSHAKE_RECORD = 0x16;
const PLAIN_HTTP_BODY = JSON.stringify({
  message: 'this API is served over HTTPS only; plain HTTP requests are refused',
});

function refusePlainHttp(socket: net.Socket): void {
  socket.end(
    [
      'HTTP/1.1 400 Bad Request',
      'Content-Type: application/json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(PLAIN_HTTP_BODY)}`,
      'Connection: close',
      '',
      PLAIN_HTTP_BODY,
    ].join('\r\n'),
  );
}

/**
 * Listens on one port for the HTTPS server. The first byte of each connection tells a TLS
 * handshake from anything else: TLS goes to the server, plain HTTP gets a clear 400 and is closed.
 */
export function listenHttpsOnly(
  tlsServer: TlsServer,
  port: number,
  host: string,
): Promise<net.Server> {
  const listener = net.createServer({ pauseOnConnect: true }, (socket) => {
    socket.on('error', () => socket.destroy());
    socket.setTimeout(30_000, () => socket.destroy());
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      socket.setTimeout(0);
      socket.unshift(chunk);
      if (chunk[0] === TLS_HANDSHAKE_RECORD) {
        // The TLS socket takes over and reads the unshifted bytes itself; resuming here would
        // steal them.
        tlsServer.emit('connection', socket);
      } else {
        refusePlainHttp(socket);
      }
    });
    socket.resume();
  });
  return new Promise((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(port, host, () => {
      listener.off('error', reject);
      resolve(listener);
    });
  });
}
