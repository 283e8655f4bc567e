import { claimRowLimit } from './outbox-relay';

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
