import {
  arrivalsPerSecond,
  arrivalTimes,
  deliveryLatencies,
  waitForArrivals,
  WebhookReceipts,
} from './webhook-receipts';

describe('webhook receipts', () => {
  it('counts each endpoint and webhook-id once, later copies as duplicates', () => {
    const receipts = new WebhookReceipts();
    receipts.record('a', 'e1', 10);
    receipts.record('b', 'e1', 11);
    receipts.record('a', 'e1', 12);
    expect(receipts.count).toBe(2);
    expect(receipts.duplicates).toBe(1);
    expect(receipts.firstArrival('a', 'e1')).toBe(10);
    expect(receipts.arrivals).toEqual([10, 11]);
  });

  it('measures published → first arrival of every expected delivery and counts missing ones', () => {
    const receipts = new WebhookReceipts();
    receipts.record('a', 'e1', 110);
    receipts.record('b', 'e1', 130);
    receipts.record('a', 'e1', 500);
    receipts.record('a', 'e2', 1_200);
    const latencies = deliveryLatencies(receipts, [
      { eventId: 'e1', endpoints: ['a', 'b'], publishedAt: 100 },
      { eventId: 'e2', endpoints: ['a', 'c'], publishedAt: 200 },
    ]);
    expect(latencies).toEqual({
      expected: 4,
      received: 3,
      missing: 1,
      p50Ms: 30,
      p99Ms: 1_000,
      maxMs: 1_000,
    });
  });

  it('gives no latency without arrivals and no rate under two arrivals', () => {
    const latencies = deliveryLatencies(new WebhookReceipts(), [
      { eventId: 'e1', endpoints: ['a'], publishedAt: 0 },
    ]);
    expect(latencies.missing).toBe(1);
    expect(latencies.p99Ms).toBeNaN();
    expect(arrivalsPerSecond([5])).toBeNaN();
    expect(arrivalsPerSecond([0, 500, 1_000])).toBe(2);
  });
});

describe('arrival times', () => {
  it('lists the first arrival of each expected delivery that arrived', () => {
    const receipts = new WebhookReceipts();
    receipts.record('a', 'e1', 10);
    receipts.record('a', 'e1', 20);
    receipts.record('x', 'e9', 30);
    expect(
      arrivalTimes(receipts, [{ eventId: 'e1', endpoints: ['a', 'b'], publishedAt: 0 }]),
    ).toEqual([10]);
  });
});

describe('waiting for arrivals', () => {
  const expected = [{ eventId: 'e1', endpoints: ['a'], publishedAt: 0 }];
  const limits = { runTimeoutMs: 5_000, stallMs: 200, pollMs: 5 };

  it('resolves once every expected delivery arrived', async () => {
    const receipts = new WebhookReceipts();
    setTimeout(() => receipts.record('a', 'e1', performance.now()), 20);
    await expect(
      waitForArrivals(receipts, expected, limits, new AbortController().signal, 'run'),
    ).resolves.toBeUndefined();
  });

  it('gives up when nothing arrived for the stall limit, saying how many did', async () => {
    await expect(
      waitForArrivals(new WebhookReceipts(), expected, limits, new AbortController().signal, 'run'),
    ).rejects.toThrow('run: 0 of 1 deliveries arrived');
  });

  it('stops when aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('interrupted'));
    await expect(
      waitForArrivals(new WebhookReceipts(), expected, limits, controller.signal, 'run'),
    ).rejects.toThrow('interrupted');
  });
});
