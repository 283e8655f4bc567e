import { Batcher } from './batcher';

/** A flush that records each batch it was given and doubles the numbers. */
function recordingFlush(fails: (items: readonly number[]) => boolean = () => false) {
  const batches: number[][] = [];
  const flush = (items: readonly number[]) => {
    batches.push([...items]);
    return fails(items)
      ? Promise.reject(new Error(`refused ${items.join(',')}`))
      : Promise.resolve(items.map((item) => item * 2));
  };
  return { batches, flush };
}

/** A flush that records each batch and finishes only when its `running` entry is called. */
function heldFlush() {
  const batches: number[][] = [];
  const running: Array<() => void> = [];
  const flush = (items: readonly number[]) => {
    batches.push([...items]);
    return new Promise<number[]>((resolve) =>
      running.push(() => resolve(items.map((item) => item * 2))),
    );
  };
  return { batches, running, flush };
}

describe('batcher', () => {
  afterEach(() => jest.useRealTimers());

  it('flushes as soon as maxItems are waiting, each caller getting its own result', async () => {
    const { batches, flush } = recordingFlush();
    const batcher = new Batcher({ maxItems: 3, maxWaitMs: 60_000 }, flush);

    const results = await Promise.all([1, 2, 3].map((item) => batcher.add(item)));

    expect(results).toEqual([2, 4, 6]);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('flushes what is waiting maxWaitMs after the first item came', async () => {
    jest.useFakeTimers();
    const { batches, flush } = recordingFlush();
    const batcher = new Batcher({ maxItems: 10, maxWaitMs: 5 }, flush);

    const first = batcher.add(1);
    jest.advanceTimersByTime(4);
    const second = batcher.add(2);
    expect(batches).toEqual([]);
    jest.advanceTimersByTime(1);

    await expect(Promise.all([first, second])).resolves.toEqual([2, 4]);
    expect(batches).toEqual([[1, 2]]);
    const third = batcher.add(3);
    jest.advanceTimersByTime(5);
    await expect(third).resolves.toBe(6);
    expect(batches).toEqual([[1, 2], [3]]);
  });

  it('flushes each item of a failed batch alone: only the bad one fails', async () => {
    const { batches, flush } = recordingFlush((items) => items.includes(2));
    const batcher = new Batcher({ maxItems: 3, maxWaitMs: 60_000 }, flush);

    const results = await Promise.allSettled([1, 2, 3].map((item) => batcher.add(item)));

    expect(results).toEqual([
      { status: 'fulfilled', value: 2 },
      { status: 'rejected', reason: new Error('refused 2') },
      { status: 'fulfilled', value: 6 },
    ]);
    expect(batches).toEqual([[1, 2, 3], [1], [2], [3]]);
  });

  it('fails every caller of a flush that gives the wrong number of results, each alone', async () => {
    const batches: number[][] = [];
    const batcher = new Batcher({ maxItems: 2, maxWaitMs: 60_000 }, (items: readonly number[]) => {
      batches.push([...items]);
      return Promise.resolve([]);
    });

    const results = await Promise.allSettled([1, 2].map((item) => batcher.add(item)));

    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    expect(batches).toEqual([[1, 2], [1], [2]]);
  });

  it('one flush at a time: what comes meanwhile goes together in the next', async () => {
    const { batches, running, flush } = heldFlush();
    const batcher = new Batcher({ maxItems: 2, maxWaitMs: 60_000, oneAtATime: true }, flush);

    const first = [1, 2].map((item) => batcher.add(item));
    const next = [3, 4, 5].map((item) => batcher.add(item));
    expect(batches).toEqual([[1, 2]]);
    running.shift()?.();
    await expect(Promise.all(first)).resolves.toEqual([2, 4]);
    expect(batches).toEqual([
      [1, 2],
      [3, 4],
    ]);
    running.shift()?.();
    await expect(Promise.all(next.slice(0, 2))).resolves.toEqual([6, 8]);
    expect(batches).toEqual([[1, 2], [3, 4], [5]]);
    running.shift()?.();
    await expect(next[2]).resolves.toBe(10);
    expect(running).toEqual([]);
  });

  it('with maxWaitMs 0, flushes the items of one turn of the event loop together, at its end', async () => {
    const { batches, flush } = recordingFlush();
    const batcher = new Batcher({ maxItems: 10, maxWaitMs: 0 }, flush);

    const first = [batcher.add(1), batcher.add(2)];
    expect(batches).toEqual([]);
    await expect(Promise.all(first)).resolves.toEqual([2, 4]);
    expect(batches).toEqual([[1, 2]]);
    await expect(batcher.add(3)).resolves.toBe(6);
    expect(batches).toEqual([[1, 2], [3]]);
  });

  it('with maxWaitMs 0 and one flush at a time, what comes during a flush goes in the next', async () => {
    const { batches, running, flush } = heldFlush();
    const batcher = new Batcher({ maxItems: 10, maxWaitMs: 0, oneAtATime: true }, flush);

    const first = batcher.add(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toEqual([[1]]);
    const next = [batcher.add(2), batcher.add(3)];
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toEqual([[1]]);
    running.shift()?.();
    await expect(first).resolves.toBe(2);
    expect(batches).toEqual([[1], [2, 3]]);
    running.shift()?.();
    await expect(Promise.all(next)).resolves.toEqual([4, 6]);
    expect(running).toEqual([]);
  });
});
