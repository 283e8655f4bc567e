import { currentTraceContext, traceContextFrom } from '@envoi/shared-observability';

import { type StreamDelivery, UnprocessableMessageError } from '../jetstream-consumer';
import {
  decodeCarriedEvents,
  type DecodedEvents,
  decodeEachEvent,
  logLeftOutEvents,
} from './batch-events';

function decodeNumber(event: unknown): number {
  if (typeof event !== 'number') throw new UnprocessableMessageError(`${String(event)}: no number`);
  return event;
}

describe('decodeEachEvent', () => {
  it('decodes every event, in order', () => {
    expect(decodeEachEvent([1, 2, 3], decodeNumber)).toEqual({
      events: [1, 2, 3],
      unprocessable: [],
    });
  });

  it('leaves out the events no retry can help, saying why, and keeps the others', () => {
    expect(decodeEachEvent([1, 'a', 3, 'b'], decodeNumber)).toEqual({
      events: [1, 3],
      unprocessable: ['a: no number', 'b: no number'],
    });
  });

  it('makes the message unprocessable when none of its events decodes', () => {
    expect(() => decodeEachEvent(['a'], decodeNumber)).toThrow(
      new UnprocessableMessageError('a: no number'),
    );
    expect(() => decodeEachEvent(['a', 'b'], decodeNumber)).toThrow(UnprocessableMessageError);
  });

  it('lets any other error through (not the event’s fault)', () => {
    const failing = () => {
      throw new Error('out of memory');
    };
    expect(() => decodeEachEvent([1], failing)).toThrow('out of memory');
  });
});

describe('decodeCarriedEvents', () => {
  const first = { id: 'event-1', type: 'message.delivered', data: {} };
  const second = { id: 'event-2', type: 'message.bounced', data: {} };
  const asItself = (event: unknown) => event;
  const BATCH_TYPES = ['message.outcome_batch', 'message.reception_batch'];

  it.each(BATCH_TYPES)("decodes a %s's events, in order", (type) => {
    const batch = { id: 'batch-1', type, data: { events: [first, second] } };

    expect(decodeCarriedEvents(batch, BATCH_TYPES, asItself)).toEqual({
      events: [first, second],
      unprocessable: [],
    });
  });

  it('decodes any other message as its own one event, as before', () => {
    for (const message of [first, 'text', null]) {
      expect(decodeCarriedEvents(message, BATCH_TYPES, asItself)).toEqual({
        events: [message],
        unprocessable: [],
      });
    }
    expect(() => decodeCarriedEvents('a', BATCH_TYPES, decodeNumber)).toThrow(
      new UnprocessableMessageError('a: no number'),
    );
  });

  it("leaves out a batch's events no retry can help", () => {
    const batch = { type: 'message.outcome_batch', data: { events: [1, 'a', 3] } };

    expect(decodeCarriedEvents(batch, BATCH_TYPES, decodeNumber)).toEqual({
      events: [1, 3],
      unprocessable: ['a: no number'],
    });
  });

  it.each([
    ['no data', { type: 'message.outcome_batch' }],
    ['no events', { type: 'message.outcome_batch', data: {} }],
    ['events not a list', { type: 'message.outcome_batch', data: { events: first } }],
    ['an empty list', { type: 'message.outcome_batch', data: { events: [] } }],
  ])('refuses a batch with %s as unprocessable', (_, batch) => {
    expect(() => decodeCarriedEvents(batch, BATCH_TYPES, asItself)).toThrow(
      new UnprocessableMessageError('the message.outcome_batch has no events'),
    );
  });
});

describe('logLeftOutEvents', () => {
  it('logs each event left out in the trace context of its message', () => {
    const trace = traceContextFrom(() => undefined);
    const delivery = { subject: 'events.x.batch.v1', streamSequence: 7, trace } as StreamDelivery;
    const logged: Array<[string, string | undefined]> = [];
    const logger = {
      error: (message: string) => {
        logged.push([message, currentTraceContext()?.requestId]);
      },
    };
    const decoded: DecodedEvents<number> = { events: [1], unprocessable: ['a: no number'] };

    logLeftOutEvents([{ event: decoded, delivery }], logger);

    expect(logged).toEqual([
      ['events.x.batch.v1 #7: an event left out: a: no number', trace.requestId],
    ]);
  });
});
