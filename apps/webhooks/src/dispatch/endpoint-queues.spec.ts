import type { ClaimedDelivery } from './deliveries.repository';
import { EndpointQueues } from './endpoint-queues';

describe('EndpointQueues', () => {
  let sequence = 0;
  const delivery = (webhookId: string, webhookFailing = false): ClaimedDelivery => {
    sequence += 1;
    return {
      id: `${webhookId}-${sequence}`,
      webhookId,
      eventId: `event-${sequence}`,
      eventType: 'message.delivered',
      body: '{}',
      attempts: 0,
      leaseToken: `token-${sequence}`,
      url: `https://${webhookId}.example/hook`,
      secretCiphertext: 'sealed',
      webhookFailing,
    };
  };
  const ids = (deliveries: readonly ClaimedDelivery[]) => deliveries.map(({ id }) => id);
  const later = 1_000;

  it('calls each endpoint up to its limit, in lease order, endpoints in turn', () => {
    const queues = new EndpointQueues({ perEndpoint: 2, calls: 10 });
    const a = [delivery('a'), delivery('a'), delivery('a')];
    const b = [delivery('b')];
    for (const next of [...a, ...b]) queues.add(next, later);

    const { start } = queues.next(0);
    expect(ids(start)).toEqual([a[0]?.id, b[0]?.id, a[1]?.id]);
    expect(queues.calls()).toBe(3);
    expect(queues.leases()).toBe(4);
    expect(ids(queues.next(0).start)).toEqual([]);

    queues.callEnded('a', true);
    expect(ids(queues.next(0).start)).toEqual([a[2]?.id]);
  });

  it('withdraws the listed deliveries that still wait, never one in a call', () => {
    const queues = new EndpointQueues({ perEndpoint: 1, calls: 10 });
    const a = [delivery('a'), delivery('a'), delivery('a')];
    for (const next of a) queues.add(next, later);
    expect(ids(queues.next(0).start)).toEqual([a[0]?.id]);

    const withdrawn = queues.withdraw(new Set(ids(a.slice(0, 2))));
    expect(ids(withdrawn)).toEqual([a[1]?.id]);
    expect(queues.leases()).toBe(2);
    queues.callEnded('a', true);
    expect(ids(queues.next(0).start)).toEqual([a[2]?.id]);
  });

  it('holds to the calls allowed in all, serving the endpoints in turn', () => {
    const queues = new EndpointQueues({ perEndpoint: 4, calls: 2 });
    for (const webhookId of ['a', 'a', 'b', 'b']) queues.add(delivery(webhookId), later);
    const first = queues.next(0).start;
    expect(first.map(({ webhookId }) => webhookId)).toEqual(['a', 'b']);
    queues.callEnded('a', true);
    expect(queues.next(0).start.map(({ webhookId }) => webhookId)).toEqual(['a']);
    queues.callEnded('b', true);
    expect(queues.next(0).start.map(({ webhookId }) => webhookId)).toEqual(['b']);
  });

  it('gives a failing endpoint one call at a time until a call succeeds', () => {
    const queues = new EndpointQueues({ perEndpoint: 4, calls: 10 });
    for (let index = 0; index < 4; index += 1) queues.add(delivery('sick', index === 0), later);
    expect(queues.next(0).start).toHaveLength(1);
    queues.callEnded('sick', false);
    expect(queues.next(0).start).toHaveLength(1);
    queues.callEnded('sick', true);
    expect(queues.next(0).start).toHaveLength(2);
  });

  it('drops a delivery whose start comes too late, counting its lease out', () => {
    const queues = new EndpointQueues({ perEndpoint: 1, calls: 10 });
    const [first, late] = [delivery('a'), delivery('a')];
    queues.add(first, later);
    queues.add(late, 5);
    expect(ids(queues.next(0).start)).toEqual([first.id]);
    queues.callEnded('a', true);
    expect(queues.next(10)).toEqual({ start: [], dropped: [late] });
    expect(queues.leases()).toBe(1);
    queues.settled('a');
    expect(queues.leases()).toBe(0);
    expect(queues.held()).toEqual([]);
  });

  it('holds an endpoint while any of its leases is not settled', () => {
    const queues = new EndpointQueues({ perEndpoint: 1, calls: 10 });
    queues.add(delivery('a'), later);
    queues.next(0);
    queues.callEnded('a', true);
    expect(queues.held()).toEqual(['a']);
    queues.settled('a');
    expect(queues.held()).toEqual([]);
  });

  it('drains the waiting deliveries for a replica that stops, not those in a call', () => {
    const queues = new EndpointQueues({ perEndpoint: 1, calls: 10 });
    const [calling, waiting] = [delivery('a'), delivery('a')];
    queues.add(calling, later);
    queues.add(waiting, later);
    queues.next(0);
    expect(queues.drain()).toEqual([waiting]);
    expect(queues.leases()).toBe(1);
    expect(queues.held()).toEqual(['a']);
  });
});
