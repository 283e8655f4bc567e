import { randomBytes } from 'node:crypto';

import type { StreamSubject } from '@envoi/contracts-core';
import type { TraceContext } from '@envoi/shared-observability';
import {
  AckPolicy,
  connect,
  type JetStreamManager,
  nanos,
  type NatsConnection,
  RetentionPolicy,
  StorageType,
} from 'nats';

import {
  type DurableConsumer,
  type DurableConsumerOptions,
  startDurableConsumer,
  type StreamDelivery,
} from '../src/jetstream-consumer';
import { eventually } from './eventually';

interface TestEvent {
  n: number;
}

interface Received {
  event: TestEvent;
  delivery: StreamDelivery;
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

const silentLogger = { warn: () => undefined, error: () => undefined };

describe('startDurableConsumer (real nats-server with JetStream)', () => {
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
    for (const stream of streams.splice(0)) await jsm.streams.delete(stream).catch(() => false);
  });

  afterAll(async () => {
    await connection.drain();
  });

  /** A subject on a stream of its own (created unless `create` is false). */
  async function testSubject(create = true): Promise<StreamSubject<TestEvent>> {
    const id = randomBytes(4).toString('hex');
    const stream = `TEST_CONSUMER_${id}`;
    streams.push(stream);
    if (create) await createStream(stream, id);
    return { kind: 'stream', stream, name: `tc${id}.happened` };
  }

  async function createStream(stream: string, id: string): Promise<void> {
    await jsm.streams.add({
      name: stream,
      subjects: [`tc${id}.>`],
      storage: StorageType.Memory,
      retention: RetentionPolicy.Limits,
      duplicate_window: nanos(60_000),
    });
  }

  async function publish(subject: StreamSubject<TestEvent>, n: number, msgID?: string) {
    await connection
      .jetstream()
      .publish(subject.name, new TextEncoder().encode(JSON.stringify({ n })), {
        ...(msgID ? { msgID } : {}),
      });
  }

  function start(
    subject: StreamSubject<TestEvent>,
    handle: DurableConsumerOptions<TestEvent>['handle'],
    overrides: Partial<DurableConsumerOptions<TestEvent>> = {},
  ): DurableConsumer {
    const consumer = startDurableConsumer<TestEvent>({
      connection,
      subject,
      durable: `durable-${subject.stream.toLowerCase()}`,
      handle,
      logger: silentLogger,
      ackWaitMs: 60_000,
      expiresMs: 1_000,
      setupRetryMaxMs: 200,
      retryDelayMs: () => 50,
      ...overrides,
    });
    consumers.push(consumer);
    return consumer;
  }

  function recorder(): {
    received: Received[];
    handle: (e: TestEvent, d: StreamDelivery) => Promise<void>;
  } {
    const received: Received[] = [];
    return {
      received,
      handle: (event, delivery) => {
        received.push({ event, delivery });
        return Promise.resolve();
      },
    };
  }

  async function consumerInfo(subject: StreamSubject<TestEvent>) {
    return jsm.consumers.info(subject.stream, `durable-${subject.stream.toLowerCase()}`);
  }

  it('creates the durable consumer, handles messages in order and acknowledges them', async () => {
    const subject = await testSubject();
    const { received, handle } = recorder();
    const consumer = start(subject, handle, { batch: 4, ackWaitMs: 7_000, maxDeliver: 9 });
    await consumer.ready;

    for (let n = 1; n <= 10; n++) await publish(subject, n, `id-${n}`);

    await eventually(() => received.length === 10, 'ten messages');
    expect(received.map((r) => r.event.n)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(received[0]?.delivery).toEqual({
      subject: subject.name,
      streamSequence: 1,
      deliveryCount: 1,
      msgId: 'id-1',
      signal: expect.any(AbortSignal) as AbortSignal,
      progress: expect.any(Function) as StreamDelivery['progress'],
      trace: expect.objectContaining({ requestId: expect.any(String) as string }) as TraceContext,
    });
    await eventually(async () => {
      const info = await consumerInfo(subject);
      return info.num_ack_pending === 0 && info.num_pending === 0;
    }, 'every message acknowledged');
    const info = await consumerInfo(subject);
    expect(info.config).toMatchObject({
      durable_name: `durable-${subject.stream.toLowerCase()}`,
      filter_subject: subject.name,
      ack_policy: AckPolicy.Explicit,
      ack_wait: nanos(7_000),
      max_deliver: 9,
    });
    expect(info.num_redelivered).toBe(0);
  });

  it('waits for a stream that does not exist yet', async () => {
    const subject = await testSubject(false);
    const { received, handle } = recorder();
    const consumer = start(subject, handle);
    let ready = false;
    void consumer.ready.then(() => (ready = true));

    await new Promise((resolve) => setImmediate(resolve));
    expect(ready).toBe(false);
    await createStream(subject.stream, subject.name.slice(2, 10));
    await consumer.ready;
    await publish(subject, 1);

    await eventually(() => received.length === 1, 'the message');
  });

  it('redelivers a failed message after the retry delay until the handler succeeds', async () => {
    const subject = await testSubject();
    const attempts: number[] = [];
    const consumer = start(subject, (_event, delivery) => {
      attempts.push(delivery.deliveryCount);
      if (delivery.deliveryCount < 3) {
        return Promise.reject(new Error(`attempt ${delivery.deliveryCount}`));
      }
      return Promise.resolve();
    });
    await consumer.ready;

    await publish(subject, 1);

    await eventually(() => attempts.length === 3, 'three deliveries');
    expect(attempts).toEqual([1, 2, 3]);
    await eventually(
      async () => (await consumerInfo(subject)).num_ack_pending === 0,
      'the acknowledgement',
    );
  });

  it('terminates an unreadable message and goes on with the next', async () => {
    const subject = await testSubject();
    const { received, handle } = recorder();
    const errors: string[] = [];
    const consumer = start(subject, handle, {
      logger: { warn: () => undefined, error: (message) => errors.push(message) },
    });
    await consumer.ready;

    await connection.jetstream().publish(subject.name, new TextEncoder().encode('{oops'));
    await publish(subject, 2);

    await eventually(() => received.length === 1, 'the readable message');
    expect(received[0]?.event).toEqual({ n: 2 });
    expect(errors).toHaveLength(1);
    await eventually(async () => {
      const info = await consumerInfo(subject);
      return info.num_ack_pending === 0 && info.num_redelivered === 0;
    }, 'nothing left to redeliver');
  });

  it('shares the durable between replicas: each message is handled once', async () => {
    const subject = await testSubject();
    const first = recorder();
    const second = recorder();
    await start(subject, first.handle, { batch: 2 }).ready;
    await start(subject, second.handle, { batch: 2 }).ready;

    for (let n = 1; n <= 40; n++) await publish(subject, n);

    await eventually(
      () => first.received.length + second.received.length === 40,
      'forty messages across replicas',
    );
    const all = [...first.received, ...second.received].map((r) => r.event.n);
    expect(new Set(all).size).toBe(40);
  });

  it('on stop, finishes the message in hand and hands the rest of the batch back at once', async () => {
    const subject = await testSubject();
    const release = deferred();
    const started = deferred();
    const handled: number[] = [];
    const consumer = start(
      subject,
      async (event) => {
        if (event.n === 1) {
          started.resolve();
          await release.promise;
        }
        handled.push(event.n);
      },
      { batch: 5 },
    );
    await consumer.ready;
    for (let n = 1; n <= 5; n++) await publish(subject, n);
    await started.promise;

    const stopping = consumer.stop(5_000);
    release.resolve();
    await stopping;

    expect(handled).toEqual([1]);
    // The ack wait is a minute: the others come back now only because they were handed back.
    const { received, handle } = recorder();
    await start(subject, handle, { batch: 5 }).ready;
    await eventually(() => received.length === 4, 'the four handed-back messages', 20_000);
    expect(received.map((r) => r.event.n).sort()).toEqual([2, 3, 4, 5]);
  });

  it('stops within its bound when a handler hangs; the message comes back after the ack wait', async () => {
    const subject = await testSubject();
    const started = deferred();
    const hung = start(
      subject,
      () => {
        started.resolve();
        return new Promise<void>(() => undefined);
      },
      { ackWaitMs: 1_000 },
    );
    await hung.ready;
    await publish(subject, 1);
    await started.promise;

    const before = Date.now();
    await hung.stop(300);
    // Bounded by the 300 ms it was given, not by the handler (which never ends).
    expect(Date.now() - before).toBeLessThan(5_000);

    const { received, handle } = recorder();
    await start(subject, handle, { ackWaitMs: 1_000 }).ready;
    await eventually(() => received.length === 1, 'the redelivery', 10_000);
    expect(received[0]?.delivery.deliveryCount).toBe(2);
  });

  describe('with a batch handler', () => {
    interface Handled {
      /** Events handed to `handle`, with their delivery count. */
      one: Array<[number, number]>;
      /** Groups handed to `handleBatch`. */
      together: number[][];
    }

    /**
     * A consumer whose first message (handled alone) waits until `published` more messages have
     * reached it; released, it finds them all waiting, and they make one group. `fails` makes a
     * handler throw for an event (both handlers see the same verdict).
     */
    async function busyConsumer(
      subject: StreamSubject<TestEvent>,
      fails: (event: TestEvent, deliveryCount: number) => Error | undefined = () => undefined,
      overrides: Partial<DurableConsumerOptions<TestEvent>> = {},
    ): Promise<{
      consumer: DurableConsumer;
      handled: Handled;
      release: () => void;
      started: Promise<void>;
    }> {
      const handled: Handled = { one: [], together: [] };
      const release = deferred();
      const started = deferred();
      const consumer = start(
        subject,
        async (event, delivery) => {
          handled.one.push([event.n, delivery.deliveryCount]);
          if (event.n === 1) {
            started.resolve();
            await release.promise;
          }
          const error = fails(event, delivery.deliveryCount);
          if (error) throw error;
        },
        {
          batch: 10,
          // One pull stays open while the first message is in hand.
          expiresMs: 30_000,
          handleBatch: (items) => {
            handled.together.push(items.map(({ event }) => event.n));
            const error = items
              .map(({ event, delivery }) => fails(event, delivery.deliveryCount))
              .find(Boolean);
            return error ? Promise.reject(error) : Promise.resolve();
          },
          ...overrides,
        },
      );
      await consumer.ready;
      await publish(subject, 1);
      return { consumer, handled, release: release.resolve, started: started.promise };
    }

    /** Waits until the consumer holds `count` delivered, unacknowledged messages. */
    async function inHand(subject: StreamSubject<TestEvent>, count: number): Promise<void> {
      await eventually(
        async () => (await consumerInfo(subject)).num_ack_pending === count,
        `${count} messages delivered and unacknowledged`,
      );
    }

    async function allAcknowledged(subject: StreamSubject<TestEvent>): Promise<void> {
      await eventually(async () => {
        const info = await consumerInfo(subject);
        return info.num_ack_pending === 0 && info.num_pending === 0;
      }, 'every message acknowledged');
    }

    it('hands what arrived while it was busy to the batch handler at once, then acks each', async () => {
      const subject = await testSubject();
      const { handled, release, started } = await busyConsumer(subject);
      await started;

      for (let n = 2; n <= 10; n++) await publish(subject, n);
      await inHand(subject, 10);
      release();

      await allAcknowledged(subject);
      expect(handled.one).toEqual([[1, 1]]);
      expect(handled.together).toEqual([[2, 3, 4, 5, 6, 7, 8, 9, 10]]);
      expect((await consumerInfo(subject)).num_redelivered).toBe(0);
    });

    it('pulls one group ahead of its free slots, and hands it over whole once a slot frees', async () => {
      const subject = await testSubject();
      const { handled, release, started } = await busyConsumer(subject, undefined, { batch: 3 });
      await started;

      for (let n = 2; n <= 10; n++) await publish(subject, n);
      // The pull asked for a group for its one slot and one group more: 1 in hand, 5 ahead.
      await inHand(subject, 6);
      expect((await consumerInfo(subject)).num_pending).toBe(4);
      release();

      await allAcknowledged(subject);
      expect(handled.together[0]).toEqual([2, 3, 4]);
      expect(handled.together.every((group) => group.length <= 3)).toBe(true);
      // A group of one goes to handle.
      const lone = handled.one.map(([n]) => n).filter((n) => n !== 1);
      expect([...handled.together.flat(), ...lone].sort((a, b) => a - b)).toEqual([
        2, 3, 4, 5, 6, 7, 8, 9, 10,
      ]);
    });

    it('falls back to one message at a time when a batch fails: a poison message blocks nothing', async () => {
      const subject = await testSubject();
      const { handled, release, started } = await busyConsumer(subject, (event, count) =>
        event.n === 5 && count === 1 ? new Error('poison') : undefined,
      );
      await started;

      for (let n = 2; n <= 10; n++) await publish(subject, n);
      await inHand(subject, 10);
      release();

      await allAcknowledged(subject);
      expect(handled.together).toEqual([[2, 3, 4, 5, 6, 7, 8, 9, 10]]);
      // Each on its own after the failed batch; the poison one came back (alone) and then passed.
      expect(handled.one).toEqual([
        [1, 1],
        [2, 1],
        [3, 1],
        [4, 1],
        [5, 1],
        [6, 1],
        [7, 1],
        [8, 1],
        [9, 1],
        [10, 1],
        [5, 2],
      ]);
    });

    it('terminates a message that does not decode and batches the others without it', async () => {
      const subject = await testSubject();
      const errors: string[] = [];
      const { handled, release, started } = await busyConsumer(subject, undefined, {
        logger: { warn: () => undefined, error: (message) => errors.push(message) },
      });
      await started;

      await publish(subject, 2);
      await connection.jetstream().publish(subject.name, new TextEncoder().encode('{oops'));
      await publish(subject, 4);
      await inHand(subject, 4);
      release();

      await allAcknowledged(subject);
      expect(handled.together).toEqual([[2, 4]]);
      expect(errors).toEqual([expect.stringContaining('unprocessable')]);
      expect((await consumerInfo(subject)).num_redelivered).toBe(0);
    });

    /**
     * Publishes 2…`last` while message 1 is in hand, stops the consumer as it finishes that one,
     * and answers what another consumer then gets (each number), waiting at most 20 s: far less
     * than the ack wait of a minute, so they come back only because they were handed back.
     */
    async function handedBackOnStop(
      subject: StreamSubject<TestEvent>,
      last: number,
      overrides: Partial<DurableConsumerOptions<TestEvent>>,
    ): Promise<{ handled: Handled; received: Received[] }> {
      const { consumer, handled, release, started } = await busyConsumer(
        subject,
        undefined,
        overrides,
      );
      await started;
      for (let n = 2; n <= last; n++) await publish(subject, n);
      await inHand(subject, last);

      const stopping = consumer.stop(5_000);
      release();
      await stopping;

      const { received, handle } = recorder();
      await start(subject, handle, { batch: last }).ready;
      await eventually(() => received.length === last - 1, 'the handed-back messages', 20_000);
      return { handled, received };
    }

    it('on stop, finishes the group in hand and hands what it has not started back at once', async () => {
      const subject = await testSubject();
      // A pull of exactly the ten messages (a group of five for its one slot and one group more):
      // nothing is left to deliver to it once stopped.
      const { handled, received } = await handedBackOnStop(subject, 10, { batch: 5 });

      expect(handled.one).toEqual([[1, 1]]);
      expect(handled.together).toEqual([]);
      expect(received.map((r) => r.event.n).sort((a, b) => a - b)).toEqual([
        2, 3, 4, 5, 6, 7, 8, 9, 10,
      ]);
    });

    it('on stop, hands back what a pull still open brought once that pull has expired, not after the ack wait', async () => {
      const subject = await testSubject();
      // Asks for ten, gets five: the pull stays open, and the server would hand what is given
      // back to it (no longer read) until the ack wait.
      const { handled, received } = await handedBackOnStop(subject, 5, {
        batch: 5,
        expiresMs: 2_000,
      });

      expect(handled.together).toEqual([]);
      expect(received.map((r) => r.event.n).sort((a, b) => a - b)).toEqual([2, 3, 4, 5]);
      expect(received.every((r) => r.delivery.deliveryCount === 2)).toBe(true);
    });
  });

  describe('holding at most a weight of work', () => {
    /** Every message weighs 10 (a job of ten); a replica pulls while it holds under 15. */
    const holding = { weigh: () => 10, limit: 15 };
    const wide = { batch: 20, concurrency: 20, holding };

    /** A handler that holds each message until `release` is called, reporting `progressOnStart`. */
    function holder(progressOnStart = 0) {
      const held: number[] = [];
      const handled: number[] = [];
      const gate = deferred();
      return {
        held,
        handled,
        release: gate.resolve,
        handle: async (event: TestEvent, delivery: StreamDelivery) => {
          held.push(event.n);
          delivery.progress(progressOnStart);
          await gate.promise;
          handled.push(event.n);
        },
      };
    }

    it('shares a burst between two replicas instead of letting the first take it', async () => {
      const subject = await testSubject();
      const first = holder();
      const second = holder();
      await start(subject, first.handle, wide).ready;
      await start(subject, second.handle, wide).ready;

      for (let n = 1; n <= 6; n++) await publish(subject, n);

      // Each pulls a second message while holding 10 (< 15), none while holding 20.
      await eventually(
        () => first.held.length === 2 && second.held.length === 2,
        'two messages held by each replica',
      );
      await eventually(async () => {
        const info = await consumerInfo(subject);
        return info.num_pending === 2 && info.num_ack_pending === 4;
      }, 'the other two left in the stream');
      expect(first.held.length + second.held.length).toBe(4);

      first.release();
      second.release();
      await eventually(() => first.handled.length + second.handled.length === 6, 'all six handled');
      expect([...first.handled, ...second.handled].sort()).toEqual([1, 2, 3, 4, 5, 6]);
      expect(first.handled.length).toBeGreaterThanOrEqual(2);
      expect(second.handled.length).toBeGreaterThanOrEqual(2);
    });

    it('pulls more as handlers report their work done, before the messages are settled', async () => {
      const subject = await testSubject();
      const reporting = holder(9);
      await start(subject, reporting.handle, wide).ready;

      for (let n = 1; n <= 3; n++) await publish(subject, n);

      // Each holds 1 once started: three of them (3 < 15) are all in hand, none settled.
      await eventually(() => reporting.held.length === 3, 'the three messages in hand');
      expect(reporting.handled).toEqual([]);
      reporting.release();
      await eventually(() => reporting.handled.length === 3, 'the three handled');
    });
  });

  it('updates the configuration of an existing durable', async () => {
    const subject = await testSubject();
    const first = start(subject, () => Promise.resolve(), { ackWaitMs: 5_000 });
    await first.ready;
    await first.stop();

    await start(subject, () => Promise.resolve(), { ackWaitMs: 9_000, maxDeliver: 4 }).ready;

    expect((await consumerInfo(subject)).config).toMatchObject({
      ack_wait: nanos(9_000),
      max_deliver: 4,
    });
  });

  it('recreates a durable deleted under it', async () => {
    const subject = await testSubject();
    const { received, handle } = recorder();
    const consumer = start(subject, handle);
    await consumer.ready;
    await publish(subject, 1);
    await eventually(() => received.length === 1, 'the first message');

    await jsm.consumers.delete(subject.stream, `durable-${subject.stream.toLowerCase()}`);
    await publish(subject, 2);

    // A new durable starts from the beginning of the stream: idempotent handlers absorb that.
    await eventually(() => received.some((r) => r.event.n === 2), 'the message after deletion');
  });
});
