import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Webhook streams (platform notes 1.12): temporary webhooks, the listener, the buffered events. */
export class WebhookStreams1795740000000 implements MigrationInterface {
  name = 'WebhookStreams1795740000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "webhooks"."webhooks" ADD "temporary" boolean NOT NULL DEFAULT false, ADD "streamed" boolean NOT NULL DEFAULT false, ADD "stream_session_id" uuid, ADD "stream_lease_until" TIMESTAMP WITH TIME ZONE, ADD "stream_used_at" TIMESTAMP WITH TIME ZONE`,
    );
    await queryRunner.query(
      `CREATE TABLE "webhooks"."webhook_stream_events" ("seq" bigint GENERATED ALWAYS AS IDENTITY NOT NULL, "webhook_id" uuid NOT NULL, "event_id" character varying(255) NOT NULL, "event_type" character varying(64) NOT NULL, "body" text NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "webhook_stream_events_pkey" PRIMARY KEY ("seq"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "webhook_stream_events_webhook_id_event_id_key" ON "webhooks"."webhook_stream_events" ("webhook_id", "event_id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "webhook_stream_events_webhook_id_seq_idx" ON "webhooks"."webhook_stream_events" ("webhook_id", "seq") `,
    );
    await queryRunner.query(
      `CREATE INDEX "webhook_stream_events_created_at_idx" ON "webhooks"."webhook_stream_events" ("created_at") `,
    );
    await queryRunner.query(
      `ALTER TABLE "webhooks"."webhook_stream_events" ADD CONSTRAINT "webhook_stream_events_webhook_id_fkey" FOREIGN KEY ("webhook_id") REFERENCES "webhooks"."webhooks"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "webhooks"."webhook_stream_events"`);
    await queryRunner.query(
      `ALTER TABLE "webhooks"."webhooks" DROP COLUMN "stream_used_at", DROP COLUMN "stream_lease_until", DROP COLUMN "stream_session_id", DROP COLUMN "streamed", DROP COLUMN "temporary"`,
    );
  }
}
