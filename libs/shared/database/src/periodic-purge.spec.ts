import { PeriodicRun, purgeInBatches } from './periodic-purge';

describe('purgeInBatches', () => {
  it('runs batches until one comes back short', async () => {
    const answers = [10, 10, 3, 10];
    const batch = jest.fn(() => Promise.resolve(answers.shift() ?? 0));
    await expect(purgeInBatches(batch, { batchSize: 10, maxBatches: 10 })).resolves.toBe(23);
    expect(batch).toHaveBeenCalledTimes(3);
  });

  it('stops at the batch budget, and when the service stops', async () => {
    const full = jest.fn(() => Promise.resolve(10));
    await expect(purgeInBatches(full, { batchSize: 10, maxBatches: 4 })).resolves.toBe(40);
    let calls = 0;
    const stopping = () => {
      calls += 1;
      return Promise.resolve(10);
    };
    await expect(
      purgeInBatches(stopping, { batchSize: 10, maxBatches: 10, stopped: () => calls >= 2 }),
    ).resolves.toBe(20);
  });
});

describe('PeriodicRun', () => {
  afterEach(() => jest.useRealTimers());

  it('runs after each interval, never overlapping, and stop waits for the run in progress', async () => {
    jest.useFakeTimers();
    let release: () => void = () => undefined;
    let runs = 0;
    const periodic = new PeriodicRun(() => {
      runs += 1;
      return new Promise<void>((resolve) => (release = resolve));
    }, 1_000);
    expect(periodic.stopped).toBe(true);

    periodic.start();
    expect(periodic.stopped).toBe(false);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(runs).toBe(1);
    await jest.advanceTimersByTimeAsync(5_000);
    expect(runs).toBe(1); // still running: the next one is scheduled only after it ends

    let stopped = false;
    const stopping = periodic.stop().then(() => (stopped = true));
    await jest.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(false);
    release();
    await stopping;
    await jest.advanceTimersByTimeAsync(5_000);
    expect(runs).toBe(1);
    expect(periodic.stopped).toBe(true);
  });
});
