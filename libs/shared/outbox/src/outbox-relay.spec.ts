import type { NatsConnection } from 'nats';
import type { DataSource } from 'typeorm';

import { eventsStreamDefinition } from './event-stream';
import { claimRowLimit, DEFAULT_OUTBOX_RELAY_OPTIONS, OutboxRelay } from './outbox-relay';

describe('claimRowLimit', () => {
  it('locks twice the rows the budget needs at the last claim’s messages per row', () => {
    expect(claimRowLimit(3_200, 34)).toBe(189);
    expect(claimRowLimit(100, 100)).toBe(2);
  });

  it('never locks more rows than the budget has messages, nor fewer than one', () => {
    expect(claimRowLimit(3_200, 1)).toBe(3_200);
    expect(claimRowLimit(3_200, 0.5)).toBe(3_200);
    expect(claimRowLimit(1, 1_000)).toBe(1);
  });
});

describe('OutboxRelay.notify', () => {
  const intervalMs = 1_000;
  const wakeDelayMs = 20;

  /** A relay whose runs each fail at once (the stream cannot be created), counted. */
  function countedRelay() {
    let runs = 0;
    const connection = {
      jetstreamManager: () => {
        runs++;
        return Promise.reject(new Error('down'));
      },
    } as unknown as NatsConnection;
    const relay = new OutboxRelay(
      {} as DataSource,
      connection,
      {
        ...DEFAULT_OUTBOX_RELAY_OPTIONS,
        stream: eventsStreamDefinition(),
        intervalMs,
        wakeDelayMs,
      },
      { warn: () => undefined },
    );
    return { relay, runs: () => runs };
  }

  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => jest.useRealTimers());

  it('sets the wake once for commits notified together, and runs once for them', async () => {
    const { relay, runs } = countedRelay();
    relay.start();
    await jest.advanceTimersByTimeAsync(0);
    expect(runs()).toBe(1);
    // Idle until the interval: the first commit brings the run forward, the others ride on it.
    await jest.advanceTimersByTimeAsync(100);
    const setTimeoutSpy = jest.spyOn(global, 'setTimeout');
    for (let commit = 0; commit < 50; commit++) relay.notify();
    expect(setTimeoutSpy).toHaveBeenCalledTimes(1);
    setTimeoutSpy.mockRestore();

    // The last run started 100 ms before: the wake is due at once.
    await jest.advanceTimersByTimeAsync(0);
    expect(runs()).toBe(2);
    // The next one comes after the interval, not once more per commit.
    await jest.advanceTimersByTimeAsync(intervalMs - 1);
    expect(runs()).toBe(2);
    await jest.advanceTimersByTimeAsync(1);
    expect(runs()).toBe(3);
    await relay.stop();
  });

  it('brings the next run forward for a commit notified once the wake has passed', async () => {
    const { relay, runs } = countedRelay();
    relay.start();
    await jest.advanceTimersByTimeAsync(0);
    relay.notify();
    await jest.advanceTimersByTimeAsync(wakeDelayMs);
    expect(runs()).toBe(2);
    relay.notify();
    await jest.advanceTimersByTimeAsync(wakeDelayMs);
    expect(runs()).toBe(3);
    await relay.stop();
  });
});
