// What `npm run bench:inbound` reads from PostgreSQL: transactions committed (a count of round
// trips' worth of work) and how long routed mail spent in each stage of the routes service.
import { Client } from 'pg';

import { committedTransactions } from './database-transactions';

/** Milliseconds a stage took, over the calls of the run's route. */
export interface StageLatency {
  p50Ms: number;
  p99Ms: number;
}

/** Where a routed message spent its time after the MX received it. */
export interface InboundStages {
  calls: number;
  /** Calls made straight from the stream and stored with their result. */
  storedWithResult: number;
  /**
   * MX receipt → the routes service's intake transaction (spool, events, pull, read, parse, and
   * the first call when it is made straight from the stream).
   */
  receivedToPlanned: StageLatency;
  /** Stored → its call's outcome recorded (0 when stored with it; else a place, claim, POST). */
  plannedToRecorded: StageLatency;
}

const STAGES_SQL = `
  WITH stages AS (
    SELECT extract(epoch FROM d.created_at - m.received_at) * 1000 AS planned,
           extract(epoch FROM d.updated_at - d.created_at) * 1000 AS recorded
    FROM routes.route_deliveries d JOIN routes.inbound_messages m ON m.id = d.inbound_id
    WHERE d.route_id = $1 AND d.state = 'delivered'
  )
  SELECT count(*)::int AS calls,
    count(*) FILTER (WHERE recorded = 0)::int AS stored_with_result,
    percentile_cont(0.5) WITHIN GROUP (ORDER BY planned) AS planned_p50,
    percentile_cont(0.99) WITHIN GROUP (ORDER BY planned) AS planned_p99,
    percentile_cont(0.5) WITHIN GROUP (ORDER BY recorded) AS recorded_p50,
    percentile_cont(0.99) WITHIN GROUP (ORDER BY recorded) AS recorded_p99
  FROM stages`;

export class InboundDatabase {
  private constructor(private readonly client: Client) {}

  static async connect(databaseUrl: string): Promise<InboundDatabase> {
    const client = new Client({ connectionString: databaseUrl });
    await client.connect();
    return new InboundDatabase(client);
  }

  /** Transactions committed or rolled back in the database so far, every session's. */
  transactions(): Promise<number> {
    return committedTransactions(this.client);
  }

  /** The stages of every delivered call of `routeId` so far (warm-up included). */
  async stagesOf(routeId: string): Promise<InboundStages> {
    const { rows } = await this.client.query<{
      calls: number;
      stored_with_result: number;
      planned_p50: number | null;
      planned_p99: number | null;
      recorded_p50: number | null;
      recorded_p99: number | null;
    }>(STAGES_SQL, [routeId]);
    const row = rows[0];
    return {
      calls: row?.calls ?? 0,
      storedWithResult: row?.stored_with_result ?? 0,
      receivedToPlanned: { p50Ms: row?.planned_p50 ?? NaN, p99Ms: row?.planned_p99 ?? NaN },
      plannedToRecorded: { p50Ms: row?.recorded_p50 ?? NaN, p99Ms: row?.recorded_p99 ?? NaN },
    };
  }

  async close(): Promise<void> {
    await this.client.end();
  }
}
