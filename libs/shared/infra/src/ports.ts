import net from 'node:net';

/** A TCP port that was free on 127.0.0.1 a moment ago. */
export async function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('could not allocate a port'));
      });
    });
  });
}

/**
 * Below Linux's ephemeral range (32768–60999 by default), where no outgoing connection takes its
 * source port: what a port kept across restarts needs (a port picked by findFreePort may be some
 * connection's source port by the time it is listened on again).
 */
const STABLE_PORTS = { first: 20_000, count: 12_000 } as const;
const STABLE_PORT_TRIES = 50;

/** `count` distinct TCP ports below the ephemeral range, free on 127.0.0.1 a moment ago. */
export async function findStablePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  for (let attempt = 0; attempt < STABLE_PORT_TRIES && ports.size < count; attempt++) {
    const port = STABLE_PORTS.first + Math.floor(Math.random() * STABLE_PORTS.count);
    if (!ports.has(port) && (await canListen(port))) ports.add(port);
  }
  if (ports.size < count) {
    throw new Error(
      `no ${count} free ports below the ephemeral range in ${STABLE_PORT_TRIES} tries`,
    );
  }
  return [...ports];
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

export async function isPortOpen(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    socket.setTimeout(500);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Polls until something listens on the port, or fails after `timeoutMs`. */
export async function waitForPort(port: number, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await isPortOpen(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${what} did not open port ${port} within ${timeoutMs} ms`);
}
