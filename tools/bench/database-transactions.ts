import type { Client } from 'pg';

/**
 * Transactions committed or rolled back in the client's database so far, every session's
 * (statements outside an explicit transaction count one each): a count of round trips' worth of
 * work. A benchmark's own reads add a few.
 */
export async function committedTransactions(client: Client): Promise<number> {
  const { rows } = await client.query<{ total: string }>(
    `SELECT (xact_commit + xact_rollback)::text AS total
     FROM pg_stat_database WHERE datname = current_database()`,
  );
  // The statistics of a transaction are reported when it ends; a fresh snapshot sees them.
  await client.query('SELECT pg_stat_clear_snapshot()');
  return Number(rows[0]?.total ?? NaN);
}
