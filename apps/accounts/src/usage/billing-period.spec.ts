import { billingPeriodOf, periodKey } from './billing-period';

describe('billingPeriodOf', () => {
  it('is the calendar month in UTC', () => {
    const period = billingPeriodOf(new Date('2026-11-25T19:30:00Z'));
    expect(period.start.toISOString()).toBe('2026-11-01T00:00:00.000Z');
    expect(period.end.toISOString()).toBe('2026-12-01T00:00:00.000Z');
  });

  it('rolls over at midnight UTC on the first, across years', () => {
    expect(periodKey(new Date('2026-12-31T23:59:59.999Z'))).toBe('2026-12-01');
    expect(periodKey(new Date('2027-01-01T00:00:00.000Z'))).toBe('2027-01-01');
    expect(billingPeriodOf(new Date('2026-12-15T00:00:00Z')).end.toISOString()).toBe(
      '2027-01-01T00:00:00.000Z',
    );
  });

  it('ignores the local time zone (a time late on the 31st in UTC-5 is next month in UTC)', () => {
    expect(periodKey(new Date('2026-10-31T22:00:00-05:00'))).toBe('2026-11-01');
  });
});
