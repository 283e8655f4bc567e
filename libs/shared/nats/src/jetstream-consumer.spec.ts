import type { StreamSubject } from '@envoi/contracts-core';
import { AckPolicy, DeliverPolicy, nanos } from 'nats';

import {
  consumerConfigChanges,
  deliverMessage,
  type DeliveryOutcome,
  durableConsumerConfig,
  type DurableConsumerOptions,
  exponentialBackoff,
  type PulledMessage,
  startDurableConsumer,
  type StreamDelivery,
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
  readonly subject = SUBJECT.name;
  readonly data: Uint8Array;
  readonly headers: { get(name: string): string };
  readonly info: { deliveryCount: number; streamSequence: number };

  constructor(body: string, deliveryCount = 1, msgId = 'event-1') {
    this.data = new TextEncoder().encode(body);
    this.headers = { get: (name) => (name === 'Nats-Msg-Id' ? msgId : '') };
    this.info = { deliveryCount, streamSequence: 42 };
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
        { subject: SUBJECT.name, streamSequence: 42, deliveryCount: 2, msgId: 'e1' },
      ],
    ]);
    expect(message.settled).toEqual([{ how: 'ack' }]);
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
