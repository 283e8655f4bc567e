/** A billing period: a calendar month in UTC, from `start` (included) to `end` (excluded). */
export interface BillingPeriod {
  start: Date;
  end: Date;
}

/** The calendar month (UTC) that holds `at`. */
export function billingPeriodOf(at: Date): BillingPeriod {
  const year = at.getUTCFullYear();
  const month = at.getUTCMonth();
  return { start: new Date(Date.UTC(year, month, 1)), end: new Date(Date.UTC(year, month + 1, 1)) };
}

/** The period's key in the usage tables: its first day, `YYYY-MM-01`. */
export function periodKey(at: Date): string {
  return billingPeriodOf(at).start.toISOString().slice(0, 10);
}
