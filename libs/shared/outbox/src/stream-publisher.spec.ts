import {
  headers,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
  type SubscriptionOptions,
} from 'nats';

import { pubAckError, type StreamPublication, StreamPublisher } from './stream-publisher';

const encoder = new TextEncoder();

interface Sent {
  subject: string;
  reply: string;
  headers: MsgHdrs;
}

/** A connection that records publications and lets the test answer their reply subjects. */
function fakeConnection() {
  const sent: Sent[] = [];
  let deliver: SubscriptionOptions['callback'];
  const connection = {
    subscribe: (_subject: string, options: SubscriptionOptions) => {
      deliver = options.callback;
      return { isClosed: () => false, unsubscribe: () => undefined };
    },
    publish: (subject: string, _data: Uint8Array, options: { reply: string; headers: MsgHdrs }) => {
      sent.push({ subject, reply: options.reply, headers: options.headers });
    },
  } as unknown as NatsConnection;
  const answer = (reply: string, body: unknown): void => {
    const message = { subject: reply, data: encoder.encode(JSON.stringify(body)) } as Msg;
    deliver?.(null, message);
  };
  return { connection, sent, answer };
}

function publication(n: number): StreamPublication {
  return {
    subject: `events.test.${n}`,
    data: encoder.encode(`{"n":${n}}`),
    msgId: `id-${n}`,
    stream: 'EVENTS',
    headers: { traceparent: `trace-${n}` },
  };
}

describe('pubAckError', () => {
  it('is undefined for a PubAck, a duplicate included', () => {
    const ack = (body: unknown) => ({ data: encoder.encode(JSON.stringify(body)) });
    expect(pubAckError(ack({ stream: 'EVENTS', seq: 4 }))).toBeUndefined();
    expect(pubAckError(ack({ stream: 'EVENTS', seq: 4, duplicate: true }))).toBeUndefined();
  });

  it('is an error for a refusal, a status without a stream, or no PubAck', () => {
    const refusal = encoder.encode(
      JSON.stringify({ error: { code: 400, description: 'expected stream does not match' } }),
    );
    expect(pubAckError({ data: refusal })?.message).toContain('expected stream does not match');
    const noResponders = headers(503, 'No Responders');
    expect(pubAckError({ data: new Uint8Array(), headers: noResponders })?.message).toContain(
      '503',
    );
    expect(pubAckError({ data: encoder.encode('{oops') })).toBeInstanceOf(Error);
  });
});

describe('StreamPublisher', () => {
  it('publishes in order with the id, stream and trace headers, and waits for every answer', async () => {
    const { connection, sent, answer } = fakeConnection();
    const publisher = new StreamPublisher(connection);

    const outcomes = publisher.publishAll([publication(1), publication(2)], 5_000);
    expect(sent.map(({ subject }) => subject)).toEqual(['events.test.1', 'events.test.2']);
    expect(sent[0]?.headers.get('Nats-Msg-Id')).toBe('id-1');
    expect(sent[0]?.headers.get('Nats-Expected-Stream')).toBe('EVENTS');
    expect(sent[1]?.headers.get('traceparent')).toBe('trace-2');
    expect(new Set(sent.map(({ reply }) => reply)).size).toBe(2);

    answer(sent[1]?.reply ?? '', { error: { code: 503, description: 'stream offline' } });
    answer(sent[0]?.reply ?? '', { stream: 'EVENTS', seq: 1 });
    const [first, second] = await outcomes;
    expect(first?.status).toBe('fulfilled');
    expect(second?.status).toBe('rejected');
  });

  it('fails what the stream did not answer within the timeout, keeping what it did', async () => {
    const { connection, sent, answer } = fakeConnection();
    const publisher = new StreamPublisher(connection);

    const outcomes = publisher.publishAll([publication(1), publication(2)], 50);
    answer(sent[0]?.reply ?? '', { stream: 'EVENTS', seq: 1 });
    const settled = await outcomes;

    expect(settled.map(({ status }) => status)).toEqual(['fulfilled', 'rejected']);
    const failed = settled[1];
    expect(failed?.status === 'rejected' && String(failed.reason)).toContain('within 50 ms');
    // A late answer finds nothing waiting.
    expect(() => answer(sent[1]?.reply ?? '', { stream: 'EVENTS', seq: 2 })).not.toThrow();
  });
});
