import http from 'node:http';

import { type HealthServer, startHealthServer } from './health-server';
import { Readiness } from './readiness';

function request(
  port: number,
  path: string,
  method = 'GET',
): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const outgoing = http.request({ host: '127.0.0.1', port, path, method }, (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          body: text ? (JSON.parse(text) as unknown) : null,
        }),
      );
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

describe('health server', () => {
  let databaseUp: boolean;
  let readiness: Readiness;
  let server: HealthServer;

  beforeEach(async () => {
    databaseUp = true;
    readiness = new Readiness().register('database', () => {
      if (!databaseUp) throw new Error('connection refused');
    });
    server = await startHealthServer({ host: '127.0.0.1', port: 0, readiness });
  });

  afterEach(() => server.close());

  it('answers /healthz with 200 while the process runs', async () => {
    databaseUp = false;
    await expect(request(server.port, '/healthz')).resolves.toEqual({
      status: 200,
      body: { status: 'ok' },
    });
  });

  it('answers /readyz with 200 when ready and 503 naming what is not', async () => {
    await expect(request(server.port, '/readyz')).resolves.toEqual({
      status: 200,
      body: { status: 'ready', checks: { database: 'ok' } },
    });
    databaseUp = false;
    await expect(request(server.port, '/readyz')).resolves.toEqual({
      status: 503,
      body: { status: 'not ready', checks: { database: 'connection refused' } },
    });
  });

  it('answers 503 on /readyz once the service is stopping', async () => {
    readiness.markStopping();
    await expect(request(server.port, '/readyz')).resolves.toMatchObject({ status: 503 });
    await expect(request(server.port, '/healthz')).resolves.toMatchObject({ status: 200 });
  });

  it('serves nothing else', async () => {
    await expect(request(server.port, '/')).resolves.toMatchObject({ status: 404 });
    await expect(request(server.port, '/readyz', 'POST')).resolves.toMatchObject({ status: 405 });
  });
});
