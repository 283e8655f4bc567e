import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';

import type { StreamSubject } from '@envoi/contracts-core';
import { serviceDataSourceOptions } from '@envoi/shared-database';
import {
  type DeadLetterListReply,
  NATS_CONNECTION,
  StreamConsumer,
  StreamConsumers,
  StreamConsumersModule,
  UnprocessableMessageError,
} from '@envoi/shared-nats';
import {
  currentTraceContext,
  newTraceparent,
  type TraceContext,
  traceHeaders,
  traceIdOf,
} from '@envoi/shared-observability';
import {
  type DynamicModule,
  type INestApplicationContext,
  Injectable,
  Module,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import {
  connect,
  headers,
  type JetStreamManager,
  nanos,
  type NatsConnection,
  StorageType,
} from 'nats';
import { DataSource } from 'typeorm';

import { DeadLetterEntity, DeadLetterRepository } from '../src';

const ADMIN = path.resolve(__dirname, '../../../../dist/tools/admin/main.js');
const run = promisify(execFile);

/** Polls until `probe` answers true; fails after `timeoutMs` (tests never sleep blindly). */
async function eventually(probe: () => Promise<boolean>, what: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

interface TestEvent {
  n: number;
}

function decode(payload: unknown): TestEvent {
  const n = (payload as { n?: unknown } | null)?.n;
  if (typeof n !== 'number') throw new UnprocessableMessageError('n is not a number');
  return { n };
}

describe('dead letters (real JetStream, PostgreSQL and the admin command)', () => {
  const id = randomBytes(4).toString('hex');
  const schema = `dead_letters_int_${id}`;
  const service = `dlt-${id}`;
  const subject: StreamSubject<TestEvent> = {
    kind: 'stream',
    stream: `TEST_DLT_${id}`,
    name: `dlt${id}.happened`,
  };
  const handled: number[] = [];
  /** The trace context each successful handling ran in. */
  const handledIn: Array<TraceContext | undefined> = [];
  let failing = true;
  let connection: NatsConnection;
  let jsm: JetStreamManager;
  let app: INestApplicationContext | undefined;
  let dataSource: DataSource;

  @Injectable()
  class FlakyHandler {
    @StreamConsumer({
      durables: { [`dlt-${id}`]: subject },
      decode,
      tuning: () => ({ retry: { firstDelayMs: 50, maxDelayMs: 50, maxDeliveries: 2 } }),
    })
    handle(event: TestEvent): Promise<void> {
      if (failing) return Promise.reject(new Error(`handler down for ${event.n}`));
      handled.push(event.n);
      handledIn.push(currentTraceContext());
      return Promise.resolve();
    }
  }

  function appModule(): DynamicModule {
    @Module({})
    class TestModule {}
    const options = serviceDataSourceOptions({
      url: process.env['DATABASE_URL'] ?? '',
      schema,
      entities: [DeadLetterEntity],
      migrations: [],
      poolSize: 2,
    });
    return {
      module: TestModule,
      global: true,
      imports: [
        TypeOrmModule.forRoot(options),
        StreamConsumersModule.forRoot({
          consumes: [subject],
          service,
          deadLetters: DeadLetterRepository,
        }),
      ],
      providers: [{ provide: NATS_CONNECTION, useValue: connection }, FlakyHandler],
      exports: [NATS_CONNECTION],
    };
  }

  async function admin(
    ...args: string[]
  ): Promise<{ code: number; stdout: string; stderr: string }> {
    try {
      const { stdout, stderr } = await run(process.execPath, [ADMIN, ...args], {
        env: { ...process.env, NATS_URL: process.env['NATS_URL'] ?? '' },
        timeout: 20_000,
      });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const failed = error as { code?: number; stdout?: string; stderr?: string };
      return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
    }
  }

  async function listed(): Promise<DeadLetterListReply['dead_letters']> {
    const { code, stdout, stderr } = await admin(
      'dead-letters',
      'list',
      '--service',
      service,
      '--json',
    );
    if (code !== 0) throw new Error(`admin list failed: ${stderr}`);
    const replies = JSON.parse(stdout) as DeadLetterListReply[];
    return replies.flatMap((reply) => reply.dead_letters);
  }

  beforeAll(async () => {
    connection = await connect({ servers: (process.env['NATS_URL'] ?? '').split(',') });
    jsm = await connection.jetstreamManager();
    await jsm.streams.add({
      name: subject.stream,
      subjects: [`dlt${id}.>`],
      storage: StorageType.Memory,
      duplicate_window: nanos(60_000),
    });
    dataSource = new DataSource(
      serviceDataSourceOptions({
        url: process.env['DATABASE_URL'] ?? '',
        schema,
        entities: [DeadLetterEntity],
        migrations: [],
        poolSize: 2,
      }),
    );
    await dataSource.initialize();
    await dataSource.query(`CREATE SCHEMA "${schema}"`);
    await dataSource.synchronize();
    app = await NestFactory.createApplicationContext(appModule(), { logger: false });
    await app.get(StreamConsumers).ready();
  });

  afterAll(async () => {
    await app?.close();
    await jsm.streams.delete(subject.stream).catch(() => false);
    await connection.drain();
    await dataSource.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await dataSource.destroy();
  });

  it('records a dead letter after the last delivery, lists it and replays it through the admin command', async () => {
    const js = connection.jetstream();
    const send: TraceContext = { requestId: `send-${id}`, traceparent: newTraceparent() };
    const traced = headers();
    for (const [name, value] of Object.entries(traceHeaders(send))) traced.set(name, value);
    await js.publish(subject.name, new TextEncoder().encode('{"n":7}'), {
      msgID: `event-${id}`,
      headers: traced,
    });
    await js.publish(subject.name, new TextEncoder().encode('not json'));

    await eventually(
      async () => (await dataSource.getRepository(DeadLetterEntity).count()) === 2,
      'two dead letters',
    );
    const letters = await listed();
    expect(letters).toHaveLength(2);
    const failed = letters.find((letter) => letter.payload === '{"n":7}');
    const unprocessable = letters.find((letter) => letter.payload === 'not json');
    expect(failed).toMatchObject({
      request_id: send.requestId,
      durable: `dlt-${id}`,
      subject: subject.name,
      deliveries: 2,
      error: 'handler down for 7',
    });
    expect(unprocessable).toMatchObject({ deliveries: 1 });
    expect(unprocessable?.error).toMatch(/^not JSON/);
    const stored = await dataSource
      .getRepository(DeadLetterEntity)
      .findOneByOrFail({ id: failed?.id ?? '' });
    expect(stored.headers['Nats-Msg-Id']).toBe(`event-${id}`);

    failing = false;
    const replayed = await admin('dead-letters', 'replay', failed?.id ?? '');
    expect(replayed).toMatchObject({ code: 0 });
    expect(replayed.stdout).toContain(`${service}: dead letter ${failed?.id} handled and removed`);
    expect(handled).toEqual([7]);
    // The replay continues the trace of the send that published the event.
    expect(handledIn[0]?.requestId).toBe(send.requestId);
    expect(traceIdOf(handledIn[0]?.traceparent ?? '')).toBe(traceIdOf(send.traceparent));

    const again = await admin('dead-letters', 'replay', unprocessable?.id ?? '');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('failed again (terminated); kept');
    expect((await listed()).map((letter) => letter.id)).toEqual([unprocessable?.id]);
  });
});
