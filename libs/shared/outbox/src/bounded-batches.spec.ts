import { boundedBatches } from './bounded-batches';

describe('boundedBatches', () => {
  const size = (bytes: number) => bytes;

  it('fills each batch up to its item count, in order', () => {
    expect(boundedBatches([1, 2, 3, 4, 5], { maxItems: 2, maxBytes: 100 }, size)).toEqual([
      [1, 2],
      [3, 4],
      [5],
    ]);
  });

  it('starts a new batch before the bytes would exceed the bound', () => {
    expect(boundedBatches([40, 50, 20, 90], { maxItems: 10, maxBytes: 100 }, size)).toEqual([
      [40, 50],
      [20],
      [90],
    ]);
  });

  it('puts an item larger than the bound in a batch of its own', () => {
    expect(boundedBatches([10, 300, 10], { maxItems: 10, maxBytes: 100 }, size)).toEqual([
      [10],
      [300],
      [10],
    ]);
  });

  it('makes no batch of no items', () => {
    expect(boundedBatches([], { maxItems: 10, maxBytes: 100 }, size)).toEqual([]);
  });
});
