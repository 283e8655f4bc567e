import { once } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';

import { generate } from 'selfsigned';

import { OutboundClient, type OutboundPolicy, type ResolveHost } from '../src';

/** Every name resolves to loopback, as a rebinding or internal name would. */
const resolveToLoopback: ResolveHost = () => Promise.resolve([{ address: '127.0.0.1', family: 4 }]);

const loopbackAllowed: OutboundPolicy = { allowHttp: true, allowCidrs: ['127.0.0.0/8'] };
const nothingPrivateAllowed: OutboundPolicy = { allowHttp: true, allowCidrs: [] };

interface ReceivedRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

type Handler = (request: http.IncomingMessage, response: http.ServerResponse) => void;

const servers: (http.Server | https.Server)[] = [];
const clients: OutboundClient[] = [];

async function listen(server: http.Server | https.Server): Promise<number> {
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

/** A loopback server that records each request (body read in full) before `handle` answers. */
async function startServer(handle: Handler, options?: https.ServerOptions) {
  const received: ReceivedRequest[] = [];
  const onRequest = (request: http.IncomingMessage, response: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({
        path: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      handle(request, response);
    });
  };
  const server = options ? https.createServer(options, onRequest) : http.createServer(onRequest);
  const port = await listen(server);
  return { port, received };
}

function client(policy: OutboundPolicy, ca?: string): OutboundClient {
  const created = new OutboundClient({ policy, resolve: resolveToLoopback, ca });
  clients.push(created);
  return created;
}

afterEach(async () => {
  await Promise.all(clients.splice(0).map((created) => created.close()));
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  }
});

describe('OutboundClient against loopback servers', () => {
  it('blocks a name that resolves to loopback at connect time: nothing reaches the server', async () => {
    const { port, received } = await startServer((_request, response) => response.end('ok'));

    const result = await client(nothingPrivateAllowed).postJson(
      `http://hooks.example.com:${port}/hook`,
      {},
      '{}',
      { timeoutMs: 5_000 },
    );

    expect(result).toMatchObject({
      type: 'failure',
      kind: 'blocked',
      message:
        'hooks.example.com resolves to 127.0.0.1 is a loopback address, which outbound requests may not reach',
    });
    expect(received).toHaveLength(0);
  });

  it('posts the JSON body and headers when an allowed CIDR covers the resolved address', async () => {
    const { port, received } = await startServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end('thanks\u0000\u001b!');
    });

    const result = await client(loopbackAllowed).postJson(
      `http://hooks.example.com:${port}/hook?x=1`,
      { 'webhook-id': 'msg_1' },
      '{"type":"message.delivered"}',
      { timeoutMs: 5_000 },
    );

    expect(result).toMatchObject({
      type: 'response',
      ok: true,
      status: 200,
      bodyPrefix: 'thanks!',
      truncated: false,
    });
    expect(received).toEqual([
      expect.objectContaining({ path: '/hook?x=1', body: '{"type":"message.delivered"}' }),
    ]);
    expect(received[0].headers).toMatchObject({
      'webhook-id': 'msg_1',
      'content-type': 'application/json',
      host: `hooks.example.com:${port}`,
    });
  });

  it('sends its JSON content type once, in place of the one the caller gave', async () => {
    const contentTypes: string[] = [];
    const { port } = await startServer((request, response) => {
      for (let index = 0; index + 1 < request.rawHeaders.length; index += 2) {
        if (request.rawHeaders[index]?.toLowerCase() === 'content-type') {
          contentTypes.push(request.rawHeaders[index + 1] ?? '');
        }
      }
      response.end('ok');
    });

    const result = await client(loopbackAllowed).postJson(
      `http://127.0.0.1:${port}/hook`,
      { 'content-type': 'text/plain', 'webhook-id': 'msg_2' },
      '{}',
      { timeoutMs: 5_000 },
    );

    expect(result).toMatchObject({ type: 'response', ok: true });
    expect(contentTypes).toEqual(['application/json']);
  });

  it('refuses a literal loopback host before connecting unless allowed', async () => {
    const { port, received } = await startServer((_request, response) => response.end('ok'));

    const blocked = await client(nothingPrivateAllowed).postJson(
      `http://127.0.0.1:${port}/hook`,
      {},
      '{}',
      { timeoutMs: 5_000 },
    );
    const allowed = await client(loopbackAllowed).postJson(
      `http://127.0.0.1:${port}/hook`,
      {},
      '{}',
      { timeoutMs: 5_000 },
    );

    expect(blocked).toMatchObject({ type: 'failure', kind: 'blocked' });
    expect(allowed).toMatchObject({ type: 'response', status: 200 });
    expect(received).toHaveLength(1);
  });

  it('never follows a redirect: a 302 is a failed response', async () => {
    const { port, received } = await startServer((_request, response) => {
      response.writeHead(302, { location: '/elsewhere' });
      response.end();
    });

    const result = await client(loopbackAllowed).postJson(
      `http://127.0.0.1:${port}/hook`,
      {},
      '{}',
      { timeoutMs: 5_000 },
    );

    expect(result).toMatchObject({ type: 'response', ok: false, status: 302 });
    expect(received.map((request) => request.path)).toEqual(['/hook']);
  });

  it('gives up on a server that does not answer within the timeout', async () => {
    const { port } = await startServer(() => undefined);

    const result = await client(loopbackAllowed).postJson(
      `http://127.0.0.1:${port}/hook`,
      {},
      '{}',
      { timeoutMs: 300 },
    );

    expect(result).toMatchObject({
      type: 'failure',
      kind: 'timeout',
      message: 'no complete response within 300 ms',
    });
    expect(result.durationMs).toBeGreaterThanOrEqual(290);
    expect(result.durationMs).toBeLessThan(5_000);
  });

  it('times out a reply whose body trickles in after the headers', async () => {
    const { port } = await startServer((_request, response) => {
      response.writeHead(200);
      response.write('partial');
    });

    const result = await client(loopbackAllowed).postJson(
      `http://127.0.0.1:${port}/hook`,
      {},
      '{}',
      { timeoutMs: 300 },
    );

    expect(result).toMatchObject({ type: 'failure', kind: 'timeout' });
  });

  it('reads a huge reply only up to the limit and closes the connection', async () => {
    const chunk = Buffer.alloc(16 * 1024, 'x');
    let bytesWritten = 0;
    let closedEarly: Promise<boolean> | undefined;
    const { port } = await startServer((_request, response) => {
      response.writeHead(500);
      closedEarly = once(response, 'close').then(() => !response.writableFinished);
      // At most 64 MB, written as fast as the client reads.
      const writeMore = () => {
        while (bytesWritten < 64 * 1024 * 1024 && !response.destroyed) {
          bytesWritten += chunk.length;
          if (!response.write(chunk)) return void response.once('drain', writeMore);
        }
        response.end();
      };
      writeMore();
    });

    const result = await client(loopbackAllowed).postJson(
      `http://127.0.0.1:${port}/hook`,
      {},
      '{}',
      { timeoutMs: 5_000 },
    );

    expect(result).toMatchObject({
      type: 'response',
      ok: false,
      status: 500,
      truncated: true,
      bodyPrefix: 'x'.repeat(1024),
    });
    await expect(closedEarly).resolves.toBe(true);
    expect(bytesWritten).toBeLessThan(64 * 1024 * 1024);
  });

  it('reuses kept-alive connections for calls one after the other', async () => {
    const { port, received } = await startServer((_request, response) => response.end('ok'));
    const server = servers[servers.length - 1] as http.Server;
    let connections = 0;
    server.on('connection', () => (connections += 1));
    const caller = client(loopbackAllowed);
    const paths = Array.from({ length: 10 }, (_, index) => `/call-${index}`);

    for (const path of paths) {
      const result = await caller.postJson(`http://127.0.0.1:${port}${path}`, {}, '{}', {
        timeoutMs: 5_000,
      });
      expect(result).toMatchObject({ type: 'response', status: 200 });
    }

    expect(received.map((request) => request.path)).toEqual(paths);
    // Each call is made as the previous one's response ends: it waits for that connection to be
    // freed (one turn later) rather than open a second one.
    expect(connections).toBe(1);
  });

  it('answers calls in flight together, each on its own connection (no pipelining)', async () => {
    const waiting: http.ServerResponse[] = [];
    const { port } = await startServer((_request, response) => {
      // Nobody is answered before all three calls have arrived.
      waiting.push(response);
      if (waiting.length === 3) for (const held of waiting) held.end('ok');
    });
    const server = servers[servers.length - 1] as http.Server;
    let connections = 0;
    server.on('connection', () => (connections += 1));
    const caller = client(loopbackAllowed);

    const results = await Promise.all(
      ['/a', '/b', '/c'].map((path) =>
        caller.postJson(`http://127.0.0.1:${port}${path}`, {}, '{}', { timeoutMs: 5_000 }),
      ),
    );

    expect(results.map((result) => result.type === 'response' && result.status)).toEqual([
      200, 200, 200,
    ]);
    expect(connections).toBe(3);
  });

  it('times out a call still resolving its host, and never sends it once connected', async () => {
    const { port, received } = await startServer((_request, response) => response.end('ok'));
    const server = servers[servers.length - 1] as http.Server;
    const connected = once(server, 'connection') as Promise<[Socket]>;
    let release: (() => void) | undefined;
    const slowResolver: ResolveHost = () =>
      new Promise((resolve) => {
        release = () => resolve([{ address: '127.0.0.1', family: 4 }]);
      });
    const caller = new OutboundClient({ policy: loopbackAllowed, resolve: slowResolver });
    clients.push(caller);

    const result = await caller.postJson(`http://hooks.example.com:${port}/late`, {}, '{}', {
      timeoutMs: 200,
    });
    expect(result).toMatchObject({ type: 'failure', kind: 'timeout' });

    // The name resolves after the timeout: the connection is made, then closed unused.
    release?.();
    const [socket] = await connected;
    await once(socket, 'close');
    expect(received).toHaveLength(0);
  });

  it('reports a refused connection', async () => {
    const { port } = await startServer(() => undefined);
    const server = servers.pop() as http.Server;
    server.close();
    await once(server, 'close');

    const result = await client(loopbackAllowed).postJson(
      `http://127.0.0.1:${port}/hook`,
      {},
      '{}',
      { timeoutMs: 5_000 },
    );

    expect(result).toMatchObject({ type: 'failure', kind: 'refused' });
  });

  describe('https', () => {
    let tls: { cert: string; key: string };

    beforeAll(async () => {
      const pems = await generate([{ name: 'commonName', value: 'hooks.example.com' }], {
        keySize: 2048,
        algorithm: 'sha256',
        extensions: [
          { name: 'subjectAltName', altNames: [{ type: 2, value: 'hooks.example.com' }] },
        ],
      });
      tls = { cert: pems.cert, key: pems.private };
    });

    it('posts over https to a server whose CA the client is given', async () => {
      const { port, received } = await startServer((_request, response) => response.end('ok'), tls);

      const result = await client(
        { allowHttp: false, allowCidrs: ['127.0.0.0/8'] },
        tls.cert,
      ).postJson(`https://hooks.example.com:${port}/hook`, {}, '{"a":1}', { timeoutMs: 5_000 });

      expect(result).toMatchObject({ type: 'response', ok: true, status: 200, bodyPrefix: 'ok' });
      expect(received.map((request) => request.body)).toEqual(['{"a":1}']);
    });

    it('resumes an earlier TLS session on a new connection, whose address is still checked', async () => {
      let holding = false;
      const held: http.ServerResponse[] = [];
      let bothHeld: () => void = () => undefined;
      const twoHeld = new Promise<void>((resolve) => (bothHeld = resolve));
      const { port } = await startServer((_request, response) => {
        if (!holding) return void response.end('ok');
        held.push(response);
        if (held.length === 2) bothHeld();
      }, tls);
      const server = servers[servers.length - 1] as https.Server;
      const resumed: boolean[] = [];
      server.on('secureConnection', (socket: TLSSocket) => resumed.push(socket.isSessionReused()));
      let address = '127.0.0.1';
      const caller = new OutboundClient({
        policy: { allowHttp: false, allowCidrs: ['127.0.0.1/32'] },
        resolve: () => Promise.resolve([{ address, family: 4 }]),
        ca: tls.cert,
      });
      clients.push(caller);
      const call = () =>
        caller.postJson(`https://hooks.example.com:${port}/hook`, {}, '{}', { timeoutMs: 5_000 });

      const first = await call();
      // Two calls held by the server: the kept-alive connection and a new one, which resumes.
      holding = true;
      const busy = [call(), call()];
      await twoHeld;
      // A third call needs a connection of its own, to the address the name resolves to now.
      address = '127.0.0.2';
      const third = await call();
      for (const response of held) response.end('ok');
      const rest = await Promise.all(busy);

      expect([first, ...rest].map((result) => result.type === 'response' && result.status)).toEqual(
        [200, 200, 200],
      );
      expect(third).toMatchObject({ type: 'failure', kind: 'blocked' });
      expect(resumed).toEqual([false, true]);
    });

    it('fails with a TLS error when the certificate is not trusted', async () => {
      const { port, received } = await startServer((_request, response) => response.end('ok'), tls);

      const result = await client(loopbackAllowed).postJson(
        `https://hooks.example.com:${port}/hook`,
        {},
        '{}',
        { timeoutMs: 5_000 },
      );

      expect(result).toMatchObject({ type: 'failure', kind: 'tls' });
      expect(received).toHaveLength(0);
    });
  });
});
