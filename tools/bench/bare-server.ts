import { READY_SIGNAL } from '@envoi/shared-observability';
import { fastify } from 'fastify';

import { benchServerEnv } from './bench-server-env';

/**
 * The bare building block of the edge benchmark: a plain Fastify 5 HTTPS server with the
 * platform's certificate, a tiny JSON GET and a JSON POST echo, and nothing else. It runs as its
 * own process (started by edge-overhead.ts) so it never shares an event loop with the load
 * generator, like the gateways it is compared with.
 */
async function main(): Promise<void> {
  const { key, cert, port } = benchServerEnv();
  const app = fastify({
    https: { key, cert },
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
