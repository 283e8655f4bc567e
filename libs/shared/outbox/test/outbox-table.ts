import { serviceDataSourceOptions } from '@envoi/shared-database';
import { DataSource } from 'typeorm';

import { OutboxMessageEntity } from '../src';

/** The outbox table as every service's migrations create it, in `schema`. */
function createOutboxSql(schema: string): string {
  return `CREATE TABLE "${schema}"."outbox" ("id" uuid NOT NULL,
    "seq" bigint GENERATED ALWAYS AS IDENTITY NOT NULL,
    "stream" character varying(64) NOT NULL DEFAULT 'EVENTS',
    "subject" character varying(255) NOT NULL, "payload" jsonb NOT NULL,
    "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    "available_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    "published_at" TIMESTAMP WITH TIME ZONE, "cancelled_at" TIMESTAMP WITH TIME ZONE,
    "failed_attempts" integer NOT NULL DEFAULT '0', "last_error" text, "trace" jsonb,
    CONSTRAINT "outbox_pkey" PRIMARY KEY ("id"));
    CREATE INDEX "outbox_due_idx" ON "${schema}"."outbox" ("available_at", "seq")
    WHERE published_at IS NULL AND cancelled_at IS NULL`;
}

/** A DataSource on a new schema of the test's own that holds an outbox table. */
export async function outboxTestDataSource(schema: string, poolSize: number): Promise<DataSource> {
  const dataSource = new DataSource(
    serviceDataSourceOptions({
      url: process.env['DATABASE_URL'] ?? '',
      schema,
      entities: [OutboxMessageEntity],
      migrations: [],
      poolSize,
    }),
  );
  await dataSource.initialize();
  await dataSource.query(`CREATE SCHEMA "${schema}"`);
  await dataSource.query(createOutboxSql(schema));
  return dataSource;
}
