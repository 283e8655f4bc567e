import { figuresOf } from './delivery-queue';

describe('the delivery work queue figures', () => {
  it("turns the mean queue lengths into mean times by Little's law", () => {
    const figures = figuresOf([
      { at: 0, inStream: 10, held: 2, pulled: 0 },
      { at: 1_000, inStream: 30, held: 6, pulled: 20 },
    ]);
    expect(figures).toEqual({
      samples: 2,
      meanJobsInStream: 20,
      meanJobsHeld: 4,
      jobsPulledPerSecond: 20,
      inStreamMs: 1_000,
      heldMs: 200,
    });
  });

  it('has no figures under two samples, and no times when nothing was pulled', () => {
    expect(figuresOf([])).toBeNull();
    expect(figuresOf([{ at: 0, inStream: 1, held: 0, pulled: 5 }])).toBeNull();
    const idle = figuresOf([
      { at: 0, inStream: 3, held: 0, pulled: 5 },
      { at: 500, inStream: 3, held: 0, pulled: 5 },
    ]);
    expect(idle?.inStreamMs).toBeNaN();
  });
});
