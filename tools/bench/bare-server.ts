import { readFileSync } from 'node:fs';

import { READY_SIGNAL } from '@envoi/shared-observability';
import { fastify } from 'fastify';

/**
 * The bare building block of the edge benchmark: a plain Fastify 5 HTTPS server with the
 * platform's certificate, a tiny JSON GET and a JSON POST echo, and nothing else. It runs as its
 * own process (started by edge-overhead.ts) so it never shares an event loop with the load
 * generator, like the gateways it is compared with.
 */
async function main(): Promise<void> {
  const env = process.env;
  const keyFile = env['TLS_KEY_FILE'];
  const certFile = env['TLS_CERT_FILE'];
  const port = Number(env['BENCH_PORT']);
  if (!keyFile || !certFile || !Number.isInteger(port)) {
    throw new Error('TLS_KEY_FILE, TLS_CERT_FILE and BENCH_PORT are required');
  }
  const app = fastify({
    https: { key: readFileSync(keyFile), cert: readFileSync(certFile) },
    logger: false,
  });
  app.get('/v2/ping', () => ({ message: 'pong' }));
  app.post('/echo', (request, reply) => reply.code(201).send(request.body));
  await app.listen({ host: '127.0.0.1', port });
  process.send?.(READY_SIGNAL);

  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
