import { atLeast, below, targetLines } from './targets';

const format = (value: number) => `${value} msg/s`;

describe('targets', () => {
  it('meets an at-least target at or above its threshold, and not below it', () => {
    expect(atLeast({ target: 't', value: 10, threshold: 10, format, breakdown: [] }).met).toBe(
      true,
    );
    expect(atLeast({ target: 't', value: 9.9, threshold: 10, format, breakdown: [] }).met).toBe(
      false,
    );
  });

  it('meets a below target only strictly under its threshold', () => {
    expect(below({ target: 't', value: 49, threshold: 50, format, breakdown: [] }).met).toBe(true);
    expect(below({ target: 't', value: 50, threshold: 50, format, breakdown: [] }).met).toBe(false);
  });

  it('does not count a figure that was not measured (NaN) as met', () => {
    expect(atLeast({ target: 't', value: NaN, threshold: 1, format, breakdown: [] }).met).toBe(
      false,
    );
    expect(below({ target: 't', value: NaN, threshold: 1, format, breakdown: [] }).met).toBe(false);
  });

  it('prints the breakdown of missed targets only', () => {
    const lines = targetLines([
      atLeast({ target: 'fast', value: 12, threshold: 10, format, breakdown: ['hidden'] }),
      atLeast({ target: 'faster', value: 5, threshold: 10, format, breakdown: ['where it goes'] }),
    ]);
    expect(lines.join('\n')).toContain('1 of 2 met');
    expect(lines).toContain('  MET      fast: 12 msg/s (target ≥ 10 msg/s)');
    expect(lines).toContain('  NOT MET  faster: 5 msg/s (target ≥ 10 msg/s)');
    expect(lines).toContain('      where it goes');
    expect(lines.join('\n')).not.toContain('hidden');
  });
});
