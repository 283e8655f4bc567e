import { runPool } from './bare-process-child';

describe('runPool', () => {
  it('runs every task once with at most `concurrency` at a time and counts failures', async () => {
    const seen: number[] = [];
    let open = 0;
    let peak = 0;
    const outcome = await runPool(10, 3, new AbortController().signal, async (index) => {
      open++;
      peak = Math.max(peak, open);
      await Promise.resolve();
      seen.push(index);
      open--;
      if (index % 4 === 0) throw new Error(`task ${index} failed`);
    });
    expect(seen.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(peak).toBe(3);
    expect(outcome).toEqual({ errors: 3, firstError: 'task 0 failed' });
  });

  it('starts nothing once the deadline has passed, and says so', async () => {
    const stopped = new AbortController();
    stopped.abort();
    let started = 0;
    const outcome = await runPool(5, 2, stopped.signal, () => {
      started++;
      return Promise.resolve();
    });
    expect(started).toBe(0);
    expect(outcome.firstError).toMatch(/time limit/);
  });
});
