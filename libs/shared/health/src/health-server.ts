import http from 'node:http';
import type { AddressInfo } from 'node:net';

import type { Readiness } from './readiness';

export interface HealthServerOptions {
  host: string;
  /** 0: any free port (see `port` on the result). */
  port: number;
  readiness: Readiness;
}

export interface HealthServer {
  /** The port it listens on. */
  readonly port: number;
  close(): Promise<void>;
}

type Body = Record<string, unknown>;

/**
 * A small plain-HTTP server for probes: `GET /healthz` answers 200 while the process runs;
 * `GET /readyz` answers 200 when every readiness check passes, else 503 naming each check's
 * outcome. Nothing else is served.
 */
export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const server = http.createServer((request, response) => {
    answer(request, options.readiness).then(
      ([status, body]) => send(response, status, body),
      (error: unknown) => send(response, 500, { status: 'error', error: String(error) }),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function answer(
  request: http.IncomingMessage,
  readiness: Readiness,
): Promise<[number, Body]> {
  const path = (request.url ?? '').split('?')[0];
  if (path !== '/healthz' && path !== '/readyz') return [404, { error: 'not found' }];
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    return [405, { error: 'method not allowed' }];
  }
  if (path === '/healthz') return [200, { status: 'ok' }];
  const report = await readiness.evaluate();
  return report.ready
    ? [200, { status: 'ready', checks: report.checks }]
    : [503, { status: 'not ready', checks: report.checks }];
}

function send(response: http.ServerResponse, status: number, body: Body): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    ...(status === 405 ? { allow: 'GET, HEAD' } : {}),
  });
  response.end(text);
}
