// What `npm run bench:webhooks` reads from PostgreSQL: transactions committed (a count of round
// trips' worth of work) and when the fan-out wrote each delivery.
import { Client } from 'pg';

import { committedTransactions } from './database-transactions';

/** When the fan-out wrote the delivery of one event to one webhook (epoch ms). */
export interface DeliveryWritten {
  eventId: string;
  webhookId: string;
  createdAt: number;
  attempts: number;
  /** When its first attempt was made (epoch ms); null before one was recorded. */
  firstAttemptAt: number | null;
}

export class WebhooksDatabase {
  private constructor(private readonly client: Client) {}

  static async connect(databaseUrl: string): Promise<WebhooksDatabase> {
    const client = new Client({ connectionString: databaseUrl });
    await client.connect();
    return new WebhooksDatabase(client);
  }

  /**
   * Transactions committed or rolled back in the database so far, every session's (statements
   * outside an explicit transaction count one each). This benchmark's own reads add a few.
   */
  transactions(): Promise<number> {
    return committedTransactions(this.client);
  }

  async deliveriesOf(eventIds: readonly string[]): Promise<DeliveryWritten[]> {
    const { rows } = await this.client.query<{
      event_id: string;
      webhook_id: string;
      created_at: Date;
      attempts: number;
      first_attempt_at: Date | null;
    }>(
      `SELECT d.event_id, d.webhook_id, d.created_at, d.attempts, a.attempted_at AS first_attempt_at
       FROM webhooks.webhook_deliveries d
       LEFT JOIN webhooks.webhook_attempts a ON a.delivery_id = d.id AND a.attempt = 1
       WHERE d.event_id = ANY($1::text[])`,
      [eventIds],
    );
    return rows.map((row) => ({
      eventId: row.event_id,
      webhookId: row.webhook_id,
      createdAt: row.created_at.getTime(),
      attempts: row.attempts,
      firstAttemptAt: row.first_attempt_at?.getTime() ?? null,
    }));
  }

  async close(): Promise<void> {
    await this.client.end();
  }
}
