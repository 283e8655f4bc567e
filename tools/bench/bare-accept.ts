import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';

import { READY_SIGNAL } from '@envoi/shared-observability';
import { fastify } from 'fastify';
import { connect, type Msg, type NatsConnection } from 'nats';
import { Pool } from 'pg';

import { BARE_ACCEPT_PATH, BARE_ACCEPT_TABLE } from './bare-accept.constants';

/**
 * The bare block of the send benchmark: perf-baselines' "bare accept path" (HTTP → NATS request →
 * PostgreSQL INSERT → reply) with none of Envoi's layers. Two processes, like the gateway and the
 * messages service: `BARE_ROLE=http` is a plain Fastify 5 HTTPS server that hands each POST body to
 * a NATS request; `BARE_ROLE=responder` answers it with one multi-row INSERT (a row per recipient
 * with the content as JSON) into a scratch table of the platform's PostgreSQL, and replies with
 * an id and status `queued` per recipient, as Envoi does.
 */
const SUBJECT = 'bench.bare.accept';
const REQUEST_TIMEOUT_MS = 10_000;

interface SendBody {
  from?: { email?: string };
  subject?: string;
  text_content?: string;
  html_content?: string;
  recipients?: Array<{ email?: string }>;
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
}

async function startHttp(nats: NatsConnection): Promise<() => Promise<void>> {
  const port = Number(required('BENCH_PORT'));
  const app = fastify({
    https: {
      key: readFileSync(required('TLS_KEY_FILE')),
      cert: readFileSync(required('TLS_CERT_FILE')),
    },
    logger: false,
  });
  app.post(BARE_ACCEPT_PATH, async (request, reply) => {
    const answer = await nats.request(SUBJECT, JSON.stringify(request.body), {
      timeout: REQUEST_TIMEOUT_MS,
    });
    const text = answer.string();
    return reply
      .code(text.startsWith('{"error"') ? 500 : 202)
      .type('application/json')
      .send(text);
  });
  await app.listen({ host: '127.0.0.1', port });
  return async () => {
    await app.close();
    await nats.drain();
  };
}

async function startResponder(nats: NatsConnection): Promise<() => Promise<void>> {
  const pool = new Pool({ connectionString: required('DATABASE_URL'), max: 10 });
  await pool.query('CREATE SCHEMA IF NOT EXISTS bench');
  await pool.query(
    `CREATE TABLE IF NOT EXISTS ${BARE_ACCEPT_TABLE} (id uuid PRIMARY KEY, recipient text NOT NULL, payload jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`,
  );
  const accept = async (message: Msg) => {
    try {
      const body = message.json<SendBody>();
      const recipients = body.recipients ?? [];
      const payload = JSON.stringify({
        from: body.from?.email,
        subject: body.subject,
        text: body.text_content,
        html: body.html_content,
      });
      const ids = recipients.map(() => randomUUID());
      const values: unknown[] = [];
      const rows = recipients.map((recipient, index) => {
        values.push(ids[index], recipient.email ?? '', payload);
        return `($${3 * index + 1}, $${3 * index + 2}, $${3 * index + 3})`;
      });
      await pool.query(
        `INSERT INTO ${BARE_ACCEPT_TABLE} (id, recipient, payload) VALUES ${rows.join(', ')}`,
        values,
      );
      const data = recipients.map((recipient, index) => ({
        object: 'message',
        id: `<${ids[index] ?? ''}@bare.test>`,
        recipient: { email: recipient.email ?? '', name: '' },
        status: 'queued',
        error: null,
      }));
      message.respond(JSON.stringify({ object: 'list', data }));
    } catch (error) {
      console.error(error);
      message.respond(JSON.stringify({ error: String(error) }));
    }
  };
  nats.subscribe(SUBJECT, {
    queue: 'bare-accept',
    callback: (_error, message) => void accept(message),
  });
  return async () => {
    await nats.drain();
    await pool.end();
  };
}

async function main(): Promise<void> {
  const role = required('BARE_ROLE');
  const nats = await connect({ servers: required('NATS_URL').split(','), name: `bare-${role}` });
  const close =
    role === 'http'
      ? await startHttp(nats)
      : role === 'responder'
        ? await startResponder(nats)
        : undefined;
  if (!close) throw new Error(`BARE_ROLE must be http or responder, not ${role}`);
  process.send?.(READY_SIGNAL);

  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    close().then(
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
