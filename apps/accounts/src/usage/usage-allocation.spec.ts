import { allocateProportionally, amountInCents } from './usage-allocation';

describe('allocateProportionally', () => {
  it('splits in proportion to the counts', () => {
    expect(allocateProportionally(10_000, [1, 3])).toEqual([2_500, 7_500]);
  });

  it('gives the cents lost to rounding so that the parts add up to the total', () => {
    const parts = allocateProportionally(100, [1, 1, 1]);
    expect(parts).toEqual([34, 33, 33]);
    expect(parts.reduce((a, b) => a + b, 0)).toBe(100);
  });

  it('gives the remainder to the largest fractions first', () => {
    // Exact shares 14.28…, 28.57…, 57.14…: the one cent left goes to 28.57.
    expect(allocateProportionally(100, [1, 2, 4])).toEqual([14, 29, 57]);
  });

  it('allocates nothing when nothing was counted or nothing is to be paid', () => {
    expect(allocateProportionally(500, [0, 0])).toEqual([0, 0]);
    expect(allocateProportionally(0, [3, 4])).toEqual([0, 0]);
  });

  it('adds up to the total for many buckets', () => {
    const counts = Array.from({ length: 97 }, (_, index) => (index * 7919) % 101);
    const parts = allocateProportionally(123_457, counts);
    expect(parts.reduce((a, b) => a + b, 0)).toBe(123_457);
    expect(parts.every((part) => part >= 0)).toBe(true);
  });
});

describe('amountInCents', () => {
  it('reads whole and decimal amounts exactly', () => {
    expect(amountInCents('0')).toBe(0);
    expect(amountInCents('20')).toBe(2_000);
    expect(amountInCents('20.5')).toBe(2_050);
    expect(amountInCents('0.07')).toBe(7);
    expect(amountInCents('123456789012.99')).toBe(12_345_678_901_299);
  });
});
