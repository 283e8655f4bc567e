import { preparedQuery } from '@envoi/shared-database';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

/**
 * Grants what is left of the credit, up to the count asked for, and adds it to the period's use;
 * the row lock of the upsert serializes concurrent reservations of an account, across replicas.
 * In the SET clause `c.used` is the value before this reservation.
 */
const RESERVE_SQL = `
  INSERT INTO messages.credit_usage AS c (account_id, period_start, used, last_granted)
  VALUES ($1, (date_trunc('month', $2::timestamptz AT TIME ZONE 'UTC'))::date,
    LEAST($3::int, $4::int), LEAST($3::int, $4::int))
  ON CONFLICT (account_id, period_start) DO UPDATE
  SET last_granted = LEAST($3::int, GREATEST($4::int - c.used, 0)),
    used = c.used + LEAST($3::int, GREATEST($4::int - c.used, 0))
  RETURNING last_granted`;

/** The monthly credit of capped accounts, used up as their sends are accepted. */
@Injectable()
export class CreditReservations {
  /**
   * Reserves up to `count` messages of the credit of the period holding `at`, in the caller's
   * transaction (rolled back with it); answers how many were granted.
   */
  async reserve(
    manager: EntityManager,
    reservation: { accountId: string; at: Date; count: number; monthlyCredit: number },
  ): Promise<number> {
    const [row] = await preparedQuery<{ last_granted: number }>(manager, RESERVE_SQL, [
      reservation.accountId,
      reservation.at.toISOString(),
      reservation.count,
      reservation.monthlyCredit,
    ]);
    return row?.last_granted ?? 0;
  }
}

/** The error of a recipient refused for the credit (spec 2.6). */
export function creditUsedUp(monthlyCredit: number): string {
  return `monthly credit of ${monthlyCredit} messages used up for this period`;
}

/** Whether a recipient's error is {@link creditUsedUp}'s. */
export function isCreditRefusal(error: string | null): boolean {
  return error !== null && /^monthly credit of \d+ messages used up for this period$/.test(error);
}
