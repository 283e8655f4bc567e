import type { StreamSubject } from '@envoi/contracts-core';
import {
  currentTraceContext,
  newTraceparent,
  runInTraceContext,
  type TraceContext,
  traceHeaders,
  traceIdOf,
} from '@envoi/shared-observability';
import { AckPolicy, DeliverPolicy, nanos } from 'nats';

import {
  consumerConfigChanges,
  deliverBatch,
  deliverMessage,
  type DeliveryOutcome,
  durableConsumerConfig,
  type DurableConsumerOptions,
  exponentialBackoff,
  handBackDelayMs,
  type PulledMessage,
  startDurableConsumer,
  type StreamDelivery,
  type StreamItem,
  UnprocessableMessageError,
} from './jetstream-consumer';

interface TestEvent {
  id: string;
  n: number;
}

const SUBJECT: StreamSubject<TestEvent> = {
  kind: 'stream',
  stream: 'EVENTS',
  name: 'events.test.happened',
};

/** A message that records how it was settled. */
class FakeMessage implements PulledMessage {
  readonly settled: Array<{ how: 'ack' | 'nak' | 'term'; arg?: number }> = [];
  heartbeats = 0;
  readonly subject = SUBJECT.name;
  readonly data: Uint8Array;
  readonly headers: { get(name: string): string };
  readonly info: { deliveryCount: number; streamSequence: number };
  private readonly carried: Record<string, string> = {};

  constructor(body: string, deliveryCount = 1, msgId = 'event-1', streamSequence = 42) {
    this.data = new TextEncoder().encode(body);
    this.headers = { get: (name) => (name === 'Nats-Msg-Id' ? msgId : (this.carried[name] ?? '')) };
    this.info = { deliveryCount, streamSequence };
  }

  /** Adds the headers its publisher set (a trace context). */
  carrying(headers: Record<string, string>): this {
    Object.assign(this.carried, headers);
    return this;
  }

  ack(): void {
    this.settled.push({ how: 'ack' });
  }

  nak(millis?: number): void {
    this.settled.push(millis === undefined ? { how: 'nak' } : { how: 'nak', arg: millis });
  }

  term(): void {
    this.settled.push({ how: 'term' });
  }

  working(): void {
    this.heartbeats += 1;
  }
}

function logger() {
  return { warn: jest.fn<void, [string]>(), error: jest.fn<void, [string]>() };
}

function deliver(
  message: FakeMessage,
  handle: DurableConsumerOptions<TestEvent>['handle'],
  overrides: Partial<DurableConsumerOptions<TestEvent>> = {},
): Promise<DeliveryOutcome> {
  return deliverMessage<TestEvent>(message, {
    durable: 'test-durable',
    handle,
    logger: logger(),
    ...overrides,
  });
}

const json = (event: TestEvent): string => JSON.stringify(event);

describe('exponentialBackoff', () => {
  it('doubles from the first delay up to the cap', () => {
    const delay = exponentialBackoff(1_000, 10_000);

    expect([1, 2, 3, 4, 5, 6].map(delay)).toEqual([1_000, 2_000, 4_000, 8_000, 10_000, 10_000]);
  });

  it('treats attempts below 1 as the first and never overflows', () => {
    const delay = exponentialBackoff(250, 5_000);

    expect(delay(0)).toBe(250);
    expect(delay(10_000)).toBe(5_000);
  });
});

describe('handBackDelayMs', () => {
  it('hands back at once what a pull that brought all it asked for held', () => {
    expect(handBackDelayMs(10, 10, Date.now() + 5_000)).toBe(0);
  });

  it('waits for a pull still open to expire, with a margin for the server', () => {
    const delay = handBackDelayMs(4, 10, Date.now() + 5_000);
    expect(delay).toBeGreaterThan(5_000);
    expect(delay).toBeLessThanOrEqual(5_250);
    expect(handBackDelayMs(4, 10, Date.now() - 1_000)).toBe(250);
  });
});

describe('durableConsumerConfig', () => {
  it('asks for explicit acks of every message of the subject', () => {
    expect(
      durableConsumerConfig({
        subject: SUBJECT,
        durable: 'svc-test',
        ackWaitMs: 2_000,
        maxDeliver: 5,
      }),
    ).toEqual({
      durable_name: 'svc-test',
      filter_subject: 'events.test.happened',
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: nanos(2_000),
      max_deliver: 5,
    });
  });

  it('defaults to a 30 s ack wait and unlimited deliveries', () => {
    expect(durableConsumerConfig({ subject: SUBJECT, durable: 'svc-test' })).toMatchObject({
      ack_wait: nanos(30_000),
      max_deliver: -1,
    });
  });
});

describe('consumerConfigChanges', () => {
  const wanted = durableConsumerConfig({
    subject: SUBJECT,
    durable: 'svc-test',
    ackWaitMs: 2_000,
    maxDeliver: 5,
  });

  it('is empty when the existing consumer already has the wanted settings', () => {
    expect(consumerConfigChanges({ ...wanted, num_replicas: 1 }, wanted)).toEqual({});
  });

  it('lists the ack wait, delivery limit and filter that differ', () => {
    expect(
      consumerConfigChanges(
        { ...wanted, ack_wait: nanos(30_000), max_deliver: -1, filter_subject: 'events.old' },
        wanted,
      ),
    ).toEqual({ ack_wait: nanos(2_000), max_deliver: 5, filter_subject: SUBJECT.name });
  });
});

describe('deliverMessage', () => {
  it('hands the decoded event and its delivery to the handler, then acks', async () => {
    const message = new FakeMessage(json({ id: 'e1', n: 1 }), 2, 'e1');
    const seen: Array<[TestEvent, StreamDelivery]> = [];

    const outcome = await deliver(message, (event, delivery) => {
      seen.push([event, delivery]);
      return Promise.resolve();
    });

    expect(outcome).toBe('acked');
    expect(seen).toEqual([
      [
        { id: 'e1', n: 1 },
        {
          subject: SUBJECT.name,
          streamSequence: 42,
          deliveryCount: 2,
          msgId: 'e1',
          signal: expect.any(AbortSignal) as AbortSignal,
          progress: expect.any(Function) as StreamDelivery['progress'],
          trace: expect.objectContaining({
            requestId: expect.any(String) as string,
          }) as TraceContext,
        },
      ],
    ]);
    expect(message.settled).toEqual([{ how: 'ack' }]);
  });

  it('runs the handler in the trace context the message carries, as a new span', async () => {
    const sent: TraceContext = { requestId: 'req-1', traceparent: newTraceparent() };
    const message = new FakeMessage(json({ id: 'e1', n: 1 })).carrying(traceHeaders(sent));
    let current: TraceContext | undefined;
    let carried: TraceContext | undefined;

    await deliver(message, (_event, delivery) => {
      current = currentTraceContext();
      carried = delivery.trace;
      return Promise.resolve();
    });

    expect(current).toBe(carried);
    expect(current?.requestId).toBe('req-1');
    expect(traceIdOf(current?.traceparent ?? '')).toBe(traceIdOf(sent.traceparent));
    expect(current?.traceparent).not.toBe(sent.traceparent);
  });

  it('reports a missing Nats-Msg-Id as undefined', async () => {
    const message = new FakeMessage(json({ id: 'e1', n: 1 }), 1, '');
    let msgId: string | undefined = 'unset';

    await deliver(message, (_event, delivery) => {
      msgId = delivery.msgId;
      return Promise.resolve();
    });

    expect(msgId).toBeUndefined();
  });

  it('naks a failed message with the delay for its delivery count, and logs a warning', async () => {
    const message = new FakeMessage(json({ id: 'e1', n: 1 }), 3);
    const log = logger();

    const outcome = await deliver(message, () => Promise.reject(new Error('database down')), {
      logger: log,
      retryDelayMs: (count) => count * 100,
    });

    expect(outcome).toBe('retried');
    expect(message.settled).toEqual([{ how: 'nak', arg: 300 }]);
    expect(log.warn).toHaveBeenCalledWith(expect.stringContaining('database down'));
    expect(log.error).not.toHaveBeenCalled();
  });

  it('uses the default backoff when none is given', async () => {
    const message = new FakeMessage(json({ id: 'e1', n: 1 }), 2);

    await deliver(message, () => Promise.reject(new Error('boom')));

    expect(message.settled).toEqual([{ how: 'nak', arg: 2_000 }]);
  });

  it('terminates a message that is not JSON, without calling the handler', async () => {
    const message = new FakeMessage('{not json');
    const handle = jest.fn(() => Promise.resolve());
    const log = logger();

    const outcome = await deliver(message, handle, { logger: log });

    expect(outcome).toBe('terminated');
    expect(handle).not.toHaveBeenCalled();
    expect(message.settled).toEqual([{ how: 'term' }]);
    expect(log.error).toHaveBeenCalledWith(expect.stringContaining('not JSON'));
  });

  it('terminates a message its handler declares unprocessable', async () => {
    const message = new FakeMessage(json({ id: 'e1', n: 1 }));

    const outcome = await deliver(message, () =>
      Promise.reject(new UnprocessableMessageError('unknown version')),
    );

    expect(outcome).toBe('terminated');
    expect(message.settled).toEqual([{ how: 'term' }]);
  });

  it('uses a custom decoder, whose unprocessable errors terminate too', async () => {
    const decode = (data: Uint8Array): TestEvent => {
      const text = new TextDecoder().decode(data);
      if (!text.startsWith('n=')) throw new UnprocessableMessageError('bad format');
      return { id: 'custom', n: Number(text.slice(2)) };
    };
    const events: TestEvent[] = [];
    const handle = (event: TestEvent) => {
      events.push(event);
      return Promise.resolve();
    };

    await expect(deliver(new FakeMessage('n=7'), handle, { decode })).resolves.toBe('acked');
    await expect(deliver(new FakeMessage('x'), handle, { decode })).resolves.toBe('terminated');
    expect(events).toEqual([{ id: 'custom', n: 7 }]);
  });

  it('terminates a message that failed on its last allowed delivery', async () => {
    const early = new FakeMessage(json({ id: 'e1', n: 1 }), 2);
    const last = new FakeMessage(json({ id: 'e1', n: 1 }), 3);
    const log = logger();
    const fail = () => Promise.reject(new Error('still down'));

    await expect(deliver(early, fail, { maxDeliver: 3, logger: log })).resolves.toBe('retried');
    await expect(deliver(last, fail, { maxDeliver: 3, logger: log })).resolves.toBe('terminated');
    expect(last.settled).toEqual([{ how: 'term' }]);
    expect(log.error).toHaveBeenCalledWith(expect.stringContaining('last delivery (3)'));
  });

  it('never gives up when deliveries are unlimited', async () => {
    const message = new FakeMessage(json({ id: 'e1', n: 1 }), 1_000);

    await expect(deliver(message, () => Promise.reject(new Error('x')))).resolves.toBe('retried');
  });

  it('treats a synchronous throw like a rejection', async () => {
    const message = new FakeMessage(json({ id: 'e1', n: 1 }));

    const outcome = await deliver(message, () => {
      throw new Error('sync');
    });

    expect(outcome).toBe('retried');
  });
});

describe('deliverBatch', () => {
  /** Messages e1…eN at stream sequences 1…N. */
  function group(...bodies: Array<TestEvent | string>): FakeMessage[] {
    return bodies.map(
      (body, index) =>
        new FakeMessage(
          typeof body === 'string' ? body : json(body),
          1,
          `e${index + 1}`,
          index + 1,
        ),
    );
  }

  const events = (n: number): TestEvent[] =>
    Array.from({ length: n }, (_, index) => ({ id: `e${index + 1}`, n: index + 1 }));

  function recorder(fail: (event: TestEvent) => Error | undefined = () => undefined) {
    const one: TestEvent[] = [];
    const together: Array<Array<StreamItem<TestEvent>>> = [];
    return {
      one,
      together,
      handle: (event: TestEvent) => {
        one.push(event);
        const error = fail(event);
        return error ? Promise.reject(error) : Promise.resolve();
      },
      handleBatch: (items: ReadonlyArray<StreamItem<TestEvent>>) => {
        together.push([...items]);
        const error = items.map(({ event }) => fail(event)).find(Boolean);
        return error ? Promise.reject(error) : Promise.resolve();
      },
    };
  }

  it('hands the group to the batch handler in stream order, then acks each', async () => {
    const messages = group(...events(3));
    const handlers = recorder();

    const outcomes = await deliverBatch(messages, { durable: 'd', logger: logger(), ...handlers });

    expect(outcomes).toEqual(['acked', 'acked', 'acked']);
    expect(handlers.one).toEqual([]);
    expect(handlers.together).toEqual([
      events(3).map((event, index) => ({
        event,
        delivery: {
          subject: SUBJECT.name,
          streamSequence: index + 1,
          deliveryCount: 1,
          msgId: `e${index + 1}`,
          signal: expect.any(AbortSignal) as AbortSignal,
          progress: expect.any(Function) as StreamDelivery['progress'],
          trace: expect.objectContaining({
            requestId: expect.any(String) as string,
          }) as TraceContext,
        },
      })),
    ]);
    expect(messages.map((message) => message.settled)).toEqual([
      [{ how: 'ack' }],
      [{ how: 'ack' }],
      [{ how: 'ack' }],
    ]);
  });

  describe('trace context', () => {
    const sent = (requestId: string): TraceContext => ({
      requestId,
      traceparent: newTraceparent(),
    });

    /** Runs a group of two carrying `first` and `second`; what the handlers saw. */
    async function traced(first: TraceContext, second: TraceContext, failBatch = false) {
      const messages = group(...events(2));
      messages[0]?.carrying(traceHeaders(first));
      messages[1]?.carrying(traceHeaders(second));
      const seen = {
        batch: [] as TraceContext[],
        items: [] as TraceContext[],
        one: [] as string[],
      };
      await deliverBatch(messages, {
        durable: 'd',
        logger: logger(),
        handle: () => {
          seen.one.push(currentTraceContext()?.requestId ?? 'none');
          return Promise.resolve();
        },
        handleBatch: (items) => {
          const batch = currentTraceContext();
          if (batch) seen.batch.push(batch);
          for (const { delivery } of items) {
            // A batch handler's per-message work restores the message's own context.
            runInTraceContext(delivery.trace, () => {
              const own = currentTraceContext();
              if (own) seen.items.push(own);
            });
          }
          return failBatch ? Promise.reject(new Error('batch down')) : Promise.resolve();
        },
      });
      return seen;
    }

    it('runs the batch in the request its messages share, as a new span of its trace', async () => {
      const request = sent('req-1');

      const seen = await traced(request, { ...request, traceparent: request.traceparent });

      expect(seen.batch).toHaveLength(1);
      expect(seen.batch[0]?.requestId).toBe('req-1');
      expect(traceIdOf(seen.batch[0]?.traceparent ?? '')).toBe(traceIdOf(request.traceparent));
      expect(seen.items.map((context) => context.requestId)).toEqual(['req-1', 'req-1']);
      const spans = new Set([seen.batch[0], ...seen.items].map((context) => context?.traceparent));
      expect(spans.size).toBe(3);
    });

    it('runs a batch of several requests in a request of its own; each item keeps its own', async () => {
      const [first, second] = [sent('req-1'), sent('req-2')];

      const seen = await traced(first, second);

      expect(seen.batch).toHaveLength(1);
      expect(['req-1', 'req-2']).not.toContain(seen.batch[0]?.requestId);
      expect(seen.items.map((context) => context.requestId)).toEqual(['req-1', 'req-2']);
      expect(seen.items.map((context) => traceIdOf(context.traceparent))).toEqual([
        traceIdOf(first.traceparent),
        traceIdOf(second.traceparent),
      ]);
    });

    it('hands each message of a failed batch to handle in its own context', async () => {
      const seen = await traced(sent('req-1'), sent('req-2'), true);

      expect(seen.one).toEqual(['req-1', 'req-2']);
    });
  });

  it('hands each message to handle when the batch fails: one poison message costs only itself', async () => {
    const messages = group(...events(4));
    const handlers = recorder((event) => (event.n === 2 ? new Error('poison') : undefined));
    const log = logger();

    const outcomes = await deliverBatch(messages, {
      durable: 'd',
      logger: log,
      retryDelayMs: () => 500,
      ...handlers,
    });

    expect(outcomes).toEqual(['acked', 'retried', 'acked', 'acked']);
    expect(handlers.together).toHaveLength(1);
    expect(handlers.one.map((event) => event.n)).toEqual([1, 2, 3, 4]);
    expect(messages[1]?.settled).toEqual([{ how: 'nak', arg: 500 }]);
    expect(log.warn).toHaveBeenCalledWith(expect.stringContaining('a batch of 4 failed'));
  });

  it('terminates, through handle, an event the batch handler finds unprocessable', async () => {
    const messages = group(...events(3));
    const handlers = recorder((event) =>
      event.n === 3 ? new UnprocessableMessageError('bad event') : undefined,
    );

    const outcomes = await deliverBatch(messages, { durable: 'd', logger: logger(), ...handlers });

    expect(outcomes).toEqual(['acked', 'acked', 'terminated']);
    expect(messages[2]?.settled).toEqual([{ how: 'term' }]);
  });

  it('terminates a message that does not decode and batches the others without it', async () => {
    const messages = group({ id: 'e1', n: 1 }, '{not json', { id: 'e3', n: 3 });
    const handlers = recorder();
    const log = logger();

    const outcomes = await deliverBatch(messages, { durable: 'd', logger: log, ...handlers });

    expect(outcomes).toEqual(['acked', 'terminated', 'acked']);
    expect(handlers.together.map((items) => items.map(({ event }) => event.n))).toEqual([[1, 3]]);
    expect(log.error).toHaveBeenCalledWith(expect.stringContaining('not JSON'));
  });

  it('hands a lone message (or the one that decodes) straight to handle', async () => {
    const handlers = recorder();

    await expect(
      deliverBatch(group(...events(1)), { durable: 'd', logger: logger(), ...handlers }),
    ).resolves.toEqual(['acked']);
    await expect(
      deliverBatch(group('{oops', ...events(1)), { durable: 'd', logger: logger(), ...handlers }),
    ).resolves.toEqual(['terminated', 'acked']);

    expect(handlers.together).toEqual([]);
    expect(handlers.one).toHaveLength(2);
  });

  it('handles each message on its own without a batch handler', async () => {
    const { handle, one, together } = recorder();

    const outcomes = await deliverBatch(group(...events(3)), {
      durable: 'd',
      logger: logger(),
      handle,
    });

    expect(outcomes).toEqual(['acked', 'acked', 'acked']);
    expect(one.map((event) => event.n)).toEqual([1, 2, 3]);
    expect(together).toEqual([]);
  });
});

describe('startDurableConsumer', () => {
  const connection = {} as DurableConsumerOptions<TestEvent>['connection'];
  const base = {
    connection,
    subject: SUBJECT,
    durable: 'svc-test',
    handle: () => Promise.resolve(),
    logger: logger(),
  };

  it('refuses a pull expiry under one second', () => {
    expect(() => startDurableConsumer({ ...base, expiresMs: 500 })).toThrow(/expiresMs/);
  });

  it('refuses a batch that is not a positive integer', () => {
    expect(() => startDurableConsumer({ ...base, batch: 0 })).toThrow(/batch/);
    expect(() => startDurableConsumer({ ...base, batch: 1.5 })).toThrow(/batch/);
  });
});
