import { randomBytes } from 'node:crypto';

import type { StreamSubject } from '@envoi/contracts-core';
import { type DurableConsumer, startDurableConsumer } from '@envoi/shared-nats';
import { connect, type JetStreamManager, type NatsConnection } from 'nats';

import { ensureStream, type StreamDefinition } from '../src';

/** Polls until `probe` answers true; fails after `timeoutMs` (tests never sleep blindly). */
async function eventually(probe: () => boolean, what: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (probe()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

const silentLogger = { warn: () => undefined, error: () => undefined };

/**
 * A service upgraded to versioned stream subjects boots on a server that still has its streams
 * and durables from before: the streams gain the new subjects (ensureStream), each durable keeps
 * its name and moves to its new filter, and what is published under the new subject reaches it.
 */
describe('moving to versioned stream subjects on an existing server', () => {
  const id = randomBytes(4).toString('hex');
  let connection: NatsConnection;
  let jsm: JetStreamManager;
  const streams: string[] = [];
  const consumers: DurableConsumer[] = [];

  beforeAll(async () => {
    connection = await connect({ servers: (process.env['NATS_URL'] ?? '').split(',') });
    jsm = await connection.jetstreamManager();
  });

  afterEach(async () => {
    await Promise.all(consumers.splice(0).map((consumer) => consumer.stop(2_000)));
  });

  afterAll(async () => {
    for (const stream of streams) await jsm.streams.delete(stream).catch(() => false);
    await connection.drain();
  });

  function definition(
    name: string,
    subjects: string[],
    retention: StreamDefinition['retention'],
  ): StreamDefinition {
    return { name, subjects, maxAgeMs: 60_000, duplicateWindowMs: 60_000, replicas: 1, retention };
  }

  function consume(subject: StreamSubject<{ n: number }>, durable: string, received: number[]) {
    const consumer = startDurableConsumer<{ n: number }>({
      connection,
      subject,
      durable,
      handle: (event) => {
        received.push(event.n);
        return Promise.resolve();
      },
      logger: silentLogger,
      expiresMs: 1_000,
      setupRetryMaxMs: 200,
    });
    consumers.push(consumer);
    return consumer;
  }

  async function publish(subject: string, n: number): Promise<void> {
    await connection.jetstream().publish(subject, new TextEncoder().encode(JSON.stringify({ n })));
  }

  it.each([
    ['a limits stream of events', 'limits', `up${id}.>`, `up${id}.thing.happened`],
    ['a work queue', 'workqueue', `wq${id}.jobs`, `wq${id}.jobs`],
  ] as const)('%s', async (_what, retention, oldStreamSubject, oldName) => {
    const stream = `TEST_UPGRADE_${retention.toUpperCase()}_${id}`;
    streams.push(stream);
    const durable = `upgrade-${retention}-${id}`;
    const before: StreamSubject<{ n: number }> = { kind: 'stream', stream, name: oldName };
    const after: StreamSubject<{ n: number }> = { kind: 'stream', stream, name: `${oldName}.v1` };
    await ensureStream(connection, definition(stream, [oldStreamSubject], retention));
    const receivedBefore: number[] = [];
    const old = consume(before, durable, receivedBefore);
    await old.ready;
    await publish(before.name, 1);
    await eventually(() => receivedBefore.length === 1, 'the message under the old subject');
    await old.stop(2_000);

    // The new version of the service: the stream lists the versioned subject (a limits stream's
    // wildcard already covers it), the durable keeps its name.
    const newStreamSubject = retention === 'workqueue' ? after.name : oldStreamSubject;
    await ensureStream(connection, definition(stream, [newStreamSubject], retention));
    const receivedAfter: number[] = [];
    await consume(after, durable, receivedAfter).ready;
    await publish(after.name, 2);

    await eventually(() => receivedAfter.length === 1, 'the message under the versioned subject');
    expect(receivedAfter).toEqual([2]);
    expect((await jsm.consumers.info(stream, durable)).config.filter_subject).toBe(after.name);
    expect((await jsm.streams.info(stream)).config.subjects).toEqual(
      retention === 'workqueue' ? [oldStreamSubject, after.name] : [oldStreamSubject],
    );
  });
});
