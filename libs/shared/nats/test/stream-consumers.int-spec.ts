import { randomBytes } from 'node:crypto';

import type { StreamSubject } from '@envoi/contracts-core';
import {
  currentTraceContext,
  newTraceparent,
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
import { IsInt } from 'class-validator';
import {
  connect,
  headers,
  type JetStreamManager,
  nanos,
  type NatsConnection,
  RetentionPolicy,
  StorageType,
} from 'nats';

import {
  contractDecoder,
  type EventConsumerSettings,
  NATS_CONNECTION,
  StreamBatchConsumer,
  StreamConsumer,
  type StreamConsumerDeclaration,
  StreamConsumers,
  StreamConsumersModule,
  type StreamDelivery,
  type StreamItem,
  type StreamSettlement,
} from '../src';
import { eventually } from './eventually';

/** The contract of the test events. */
class TestEvent {
  @IsInt() n!: number;
}

class TestSettings implements EventConsumerSettings {
  EVENTS_BATCH = 8;
  EVENTS_ACK_WAIT_MS = 30_000;
  EVENTS_RETRY_MS = 200;
  SHUTDOWN_GRACE_MS = 2_000;
}

type Handler = (
  event: TestEvent,
  delivery: StreamDelivery,
) => void | StreamSettlement | Promise<void | StreamSettlement>;

describe('StreamConsumers (Nest discovery over a real nats-server with JetStream)', () => {
  let connection: NatsConnection;
  let jsm: JetStreamManager;
  const streams: string[] = [];
  const apps: INestApplicationContext[] = [];

  beforeAll(async () => {
    connection = await connect({ servers: (process.env['NATS_URL'] ?? '').split(',') });
    jsm = await connection.jetstreamManager();
  });

  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
    for (const stream of streams.splice(0)) await jsm.streams.delete(stream).catch(() => false);
  });

  afterAll(async () => {
    await connection.drain();
  });

  /** Two subjects on a stream of their own. */
  async function testSubjects(): Promise<[StreamSubject<TestEvent>, StreamSubject<TestEvent>]> {
    const id = randomBytes(4).toString('hex');
    const stream = `TEST_KIT_${id}`;
    streams.push(stream);
    await jsm.streams.add({
      name: stream,
      subjects: [`kit${id}.>`],
      storage: StorageType.Memory,
      retention: RetentionPolicy.Limits,
      duplicate_window: nanos(60_000),
    });
    const subject = (name: string): StreamSubject<TestEvent> => ({
      kind: 'stream',
      stream,
      name: `kit${id}.${name}`,
    });
    return [subject('one'), subject('two')];
  }

  async function publish(
    subject: StreamSubject<TestEvent>,
    payload: unknown,
    carried: Record<string, string> = {},
  ): Promise<void> {
    const sent = headers();
    for (const [name, value] of Object.entries(carried)) sent.set(name, value);
    await connection
      .jetstream()
      .publish(subject.name, new TextEncoder().encode(JSON.stringify(payload)), { headers: sent });
  }

  /** A handler class declaring `declaration` for its `handle` method, which calls `handler`. */
  function handlerClass(
    declaration: StreamConsumerDeclaration<TestEvent, TestSettings>,
    handler: Handler,
  ): new () => object {
    @Injectable()
    class TestHandler {
      @StreamConsumer(declaration)
      handle(event: TestEvent, delivery: StreamDelivery): Promise<void | StreamSettlement> {
        return Promise.resolve(handler(event, delivery));
      }
    }
    return TestHandler;
  }

  function appModule(
    consumes: ReadonlyArray<StreamSubject<TestEvent>>,
    handlers: ReadonlyArray<new () => object>,
  ): DynamicModule {
    @Module({})
    class TestModule {}
    return {
      module: TestModule,
      global: true,
      imports: [
        StreamConsumersModule.forRoot({ consumes, settings: TestSettings, service: 'kit' }),
      ],
      providers: [
        { provide: NATS_CONNECTION, useValue: connection },
        { provide: TestSettings, useValue: new TestSettings() },
        ...handlers,
      ],
      exports: [NATS_CONNECTION, TestSettings],
    };
  }

  async function boot(
    consumes: ReadonlyArray<StreamSubject<TestEvent>>,
    handlers: ReadonlyArray<new () => object>,
  ): Promise<StreamConsumers> {
    const app = await NestFactory.createApplicationContext(appModule(consumes, handlers), {
      logger: false,
      abortOnError: false,
    });
    apps.push(app);
    await app.init();
    const consumers = app.get(StreamConsumers);
    await consumers.ready();
    return consumers;
  }

  async function consumerInfo(subject: StreamSubject<TestEvent>, durable: string) {
    return jsm.consumers.info(subject.stream, durable);
  }

  it('discovers a declared handler and feeds it the events of its subjects, validated', async () => {
    const [one, two] = await testSubjects();
    const received: Array<{ n: number; subject: string }> = [];
    const consumers = await boot(
      [one, two],
      [
        handlerClass(
          { durables: { 'kit-one': one, 'kit-two': two }, decode: contractDecoder(TestEvent) },
          (event, delivery) => {
            received.push({ n: event.n, subject: delivery.subject });
          },
        ),
      ],
    );

    expect(consumers.declared().map(({ durable, handler }) => [durable, handler])).toEqual([
      ['kit-one', 'TestHandler.handle'],
      ['kit-two', 'TestHandler.handle'],
    ]);
    await publish(one, { n: 1 });
    await publish(two, { n: 'not a number' });
    await publish(two, { n: 2 });
    await eventually(() => received.length === 2, 'two events');
    expect(received).toEqual([
      { n: 1, subject: one.name },
      { n: 2, subject: two.name },
    ]);
    // The event that breaks the contract was terminated, not retried.
    await eventually(async () => {
      const info = await consumerInfo(two, 'kit-two');
      return info.num_ack_pending === 0 && info.num_pending === 0;
    }, 'every event of the second subject settled');
    expect(received).toHaveLength(2);
  });

  it('fails the boot when a consumed subject has no handler', async () => {
    const [one, two] = await testSubjects();
    const handler = handlerClass(
      { durables: { 'kit-one': one }, decode: contractDecoder(TestEvent) },
      () => undefined,
    );

    await expect(boot([one, two], [handler])).rejects.toThrow(`no handler for ${two.name}`);
  });

  it('fails the boot when a subject has two handlers', async () => {
    const [one] = await testSubjects();
    const decode = contractDecoder(TestEvent);
    const first = handlerClass({ durables: { 'kit-a': one }, decode }, () => undefined);
    const second = handlerClass({ durables: { 'kit-b': one }, decode }, () => undefined);

    await expect(boot([one], [first, second])).rejects.toThrow(`${one.name} has 2 handlers`);
  });

  it('redelivers a failed event after the retry policy backoff, doubling each time', async () => {
    const [one] = await testSubjects();
    const deliveredAt: number[] = [];
    await boot(
      [one],
      [
        handlerClass(
          {
            durables: { 'kit-retry': one },
            decode: contractDecoder(TestEvent),
            tuning: () => ({ retry: { firstDelayMs: 300, maxDelayMs: 5_000, maxDeliveries: -1 } }),
          },
          () => {
            deliveredAt.push(Date.now());
            if (deliveredAt.length < 3) throw new Error('not yet');
          },
        ),
      ],
    );

    await publish(one, { n: 1 });
    await eventually(() => deliveredAt.length === 3, 'the third delivery');
    const [first = 0, second = 0, third = 0] = deliveredAt;
    expect(second - first).toBeGreaterThanOrEqual(280);
    expect(third - second).toBeGreaterThanOrEqual(580);
    await eventually(
      async () => (await consumerInfo(one, 'kit-retry')).num_ack_pending === 0,
      'the event acknowledged',
    );
  });

  it('terminates an event after its last delivery, and one its handler drops', async () => {
    const [one, two] = await testSubjects();
    const deliveries = new Map<number, number>();
    await boot(
      [one, two],
      [
        handlerClass(
          {
            durables: { 'kit-max-one': one, 'kit-max-two': two },
            decode: contractDecoder(TestEvent),
            tuning: () => ({ retry: { firstDelayMs: 50, maxDelayMs: 50, maxDeliveries: 2 } }),
          },
          (event) => {
            deliveries.set(event.n, (deliveries.get(event.n) ?? 0) + 1);
            if (event.n === 1) throw new Error('always fails');
            return { kind: 'term', reason: 'not wanted' };
          },
        ),
      ],
    );

    await publish(one, { n: 1 });
    await publish(two, { n: 2 });
    await eventually(async () => {
      const [first, second] = await Promise.all([
        consumerInfo(one, 'kit-max-one'),
        consumerInfo(two, 'kit-max-two'),
      ]);
      return deliveries.size === 2 && first.num_ack_pending === 0 && second.num_ack_pending === 0;
    }, 'both events settled');
    expect(Object.fromEntries(deliveries)).toEqual({ 1: 2, 2: 1 });
  });

  it('keeps a slow handler its event beyond the ack wait with heartbeats; without, it is redelivered', async () => {
    const [one, two] = await testSubjects();
    const ackWaitMs = 1_000;
    const deliveries = { one: 0, two: 0 };
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const slow =
      (which: 'one' | 'two'): Handler =>
      async () => {
        deliveries[which] += 1;
        await released;
      };
    const consumers = await boot(
      [one, two],
      [
        handlerClass(
          {
            durables: { 'kit-heartbeat': one },
            decode: contractDecoder(TestEvent),
            heartbeat: true,
            tuning: () => ({ ackWaitMs }),
          },
          slow('one'),
        ),
        handlerClass(
          {
            durables: { 'kit-no-heartbeat': two },
            decode: contractDecoder(TestEvent),
            tuning: () => ({ ackWaitMs, concurrency: 2 }),
          },
          slow('two'),
        ),
      ],
    );

    await publish(one, { n: 1 });
    await publish(two, { n: 2 });
    // The consumer without heartbeats sees its event again once the ack wait is over...
    await eventually(() => deliveries.two >= 2, 'the redelivery without heartbeats');
    // ...and by then, more than twice the ack wait later, the one with heartbeats has not.
    const startedAt = Date.now();
    await eventually(() => Date.now() - startedAt >= ackWaitMs, 'another ack wait', 5_000);
    expect(deliveries.one).toBe(1);
    expect(consumers.busy).toBeGreaterThanOrEqual(2);
    release();
    await eventually(
      async () => (await consumerInfo(one, 'kit-heartbeat')).num_ack_pending === 0,
      'the slow event acknowledged',
    );
    expect(deliveries.one).toBe(1);
  });

  it('hands a batch handler what arrived together, each event alone when the batch fails', async () => {
    const [one] = await testSubjects();
    const calls: number[][] = [];
    @Injectable()
    class BatchHandler {
      @StreamBatchConsumer<TestEvent, TestSettings>({
        durables: { 'kit-batch': one },
        decode: contractDecoder(TestEvent),
      })
      handle(items: ReadonlyArray<StreamItem<TestEvent>>): Promise<void> {
        calls.push(items.map(({ event }) => event.n));
        const poisoned = items.length > 1 && items.some(({ event }) => event.n === 3);
        return poisoned ? Promise.reject(new Error('poison')) : Promise.resolve();
      }
    }
    // Booted and closed once, so the events wait in the stream and arrive in one pull.
    await boot([one], [BatchHandler]);
    await apps.pop()?.close();
    for (let n = 1; n <= 5; n += 1) await publish(one, { n });
    await boot([one], [BatchHandler]);

    await eventually(async () => {
      const info = await consumerInfo(one, 'kit-batch');
      return (
        info.num_ack_pending === 0 &&
        info.num_pending === 0 &&
        calls.some((call) => call.length === 1 && call[0] === 3)
      );
    }, 'every event handled');
    const [first = []] = calls;
    expect(first.length).toBeGreaterThan(1);
    expect(new Set(calls.flat())).toEqual(new Set([1, 2, 3, 4, 5]));
  });

  it('acknowledges unread the events its declaration ignores, malformed ones included', async () => {
    const [one] = await testSubjects();
    const handled: number[][] = [];
    const ignoredBytes = Buffer.from('"skip"');
    @Injectable()
    class SkippingHandler {
      @StreamBatchConsumer<TestEvent, TestSettings>({
        durables: { 'kit-ignoring': one },
        decode: contractDecoder(TestEvent),
        ignores: (data) => Buffer.from(data).includes(ignoredBytes),
      })
      handle(items: ReadonlyArray<StreamItem<TestEvent>>): Promise<void> {
        handled.push(items.map(({ event }) => event.n));
        return Promise.resolve();
      }
    }
    await boot([one], [SkippingHandler]);
    await apps.pop()?.close();
    await publish(one, { n: 1 });
    await publish(one, { n: 2, note: 'skip' });
    await publish(one, { n: 'not a number', note: 'skip' });
    await publish(one, { n: 3 });
    await boot([one], [SkippingHandler]);

    await eventually(async () => {
      const info = await consumerInfo(one, 'kit-ignoring');
      return (
        info.num_ack_pending === 0 && info.num_pending === 0 && info.ack_floor.stream_seq === 4
      );
    }, 'every event settled');
    expect(handled.flat().sort()).toEqual([1, 3]);
    // Acknowledged, not terminated: nothing is redelivered.
    const info = await consumerInfo(one, 'kit-ignoring');
    expect(info.num_redelivered).toBe(0);
  });

  it('runs a batch handler in the request its events share; each event carries its own context', async () => {
    const [one] = await testSubjects();
    const send = {
      requestId: `send-${randomBytes(4).toString('hex')}`,
      traceparent: newTraceparent(),
    };
    const calls: Array<{ batch: string[]; items: string[] }> = [];
    const traced = (context: { requestId: string; traceparent: string } | undefined) =>
      context ? `${context.requestId} ${traceIdOf(context.traceparent)}` : 'none';
    @Injectable()
    class BatchHandler {
      @StreamBatchConsumer<TestEvent, TestSettings>({
        durables: { 'kit-traced-batch': one },
        decode: contractDecoder(TestEvent),
      })
      handle(items: ReadonlyArray<StreamItem<TestEvent>>): Promise<void> {
        calls.push({
          batch: [traced(currentTraceContext())],
          items: items.map(({ delivery }) => traced(delivery.trace)),
        });
        return Promise.resolve();
      }
    }
    // Booted and closed once, so the events wait in the stream and arrive in one pull.
    await boot([one], [BatchHandler]);
    await apps.pop()?.close();
    for (let n = 1; n <= 3; n += 1) await publish(one, { n }, traceHeaders(send));
    await boot([one], [BatchHandler]);

    await eventually(() => calls.flatMap((call) => call.items).length === 3, 'every event handled');
    expect(calls[0]?.items.length).toBeGreaterThan(1);
    const expected = traced(send);
    expect(new Set(calls.flatMap((call) => [...call.batch, ...call.items]))).toEqual(
      new Set([expected]),
    );
  });
});
