import { HeldMessage, HeldWeight } from './held-weight';

describe('HeldWeight', () => {
  it('refuses a limit that is not a positive integer', () => {
    expect(() => new HeldWeight(0)).toThrow(/positive integer/);
    expect(() => new HeldWeight(2.5)).toThrow(/positive integer/);
  });

  it('asks for one message before it has seen any: each may weigh the whole limit', () => {
    expect(new HeldWeight(40).pullSize()).toBe(1);
  });

  it('sizes a pull by the heaviest message of the previous one', () => {
    const weights = new HeldWeight(40);
    weights.take(1);
    weights.take(3);
    weights.pullEnded();
    expect(weights.pullSize()).toBe(12); // (40 - 4) / 3
    weights.take(100);
    weights.pullEnded();
    expect(weights.pullSize()).toBe(1);
  });

  it('keeps the last estimate after a pull that took nothing', () => {
    const weights = new HeldWeight(40);
    weights.take(10);
    weights.pullEnded();
    weights.pullEnded();
    expect(weights.pullSize()).toBe(3); // (40 - 10) / 10
  });

  it('is full once what it holds reaches the limit, and has room again as work is released', () => {
    const weights = new HeldWeight(40);
    const job = new HeldMessage(weights, 100);
    expect(weights.full).toBe(true);
    job.progress(60);
    expect(weights.current).toBe(40);
    expect(weights.full).toBe(true);
    job.progress(1);
    expect(weights.full).toBe(false);
    job.settled();
    expect(weights.current).toBe(0);
  });

  it('never releases more of a message than it weighs, nor negative progress', () => {
    const weights = new HeldWeight(10);
    const first = new HeldMessage(weights, 3);
    const second = new HeldMessage(weights, 5);
    first.progress(-2);
    expect(weights.current).toBe(8);
    first.progress(10);
    first.progress(1);
    first.settled();
    expect(weights.current).toBe(5);
    second.settled();
    second.settled();
    expect(weights.current).toBe(0);
  });
});
