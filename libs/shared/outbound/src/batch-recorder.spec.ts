import { BatchRecorder } from './batch-recorder';

describe('BatchRecorder', () => {
  it('answers each caller by its key, null for an item the batch did not record', async () => {
    const batches: string[][] = [];
    const recorder = new BatchRecorder<string, number>({
      windowMs: 0,
      maxBatch: 10,
      keyOf: (item) => item,
      recordBatch: (items) => {
        batches.push([...items]);
        return Promise.resolve(new Map([['a', 1]]));
      },
    });
    const results = Promise.all([recorder.record('a'), recorder.record('b')]);
    await recorder.drain();
    await expect(results).resolves.toEqual([1, null]);
    expect(batches).toEqual([['a', 'b']]);
  });

  it('drains nothing when nothing waits', async () => {
    const recordBatch = jest.fn();
    const recorder = new BatchRecorder<string, number>({
      windowMs: 1_000,
      maxBatch: 10,
      keyOf: (item) => item,
      recordBatch,
    });
    await recorder.drain();
    expect(recordBatch).not.toHaveBeenCalled();
  });
});
