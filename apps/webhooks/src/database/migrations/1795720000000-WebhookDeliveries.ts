import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The deliveries of events to webhooks and the attempts made for each. */
export class WebhookDeliveries1795720000000 implements MigrationInterface {
  name = 'WebhookDeliveries1795720000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "webhooks"."webhook_deliveries" ("id" uuid NOT NULL, "seq" bigint GENERATED ALWAYS AS IDENTITY NOT NULL, "webhook_id" uuid NOT NULL, "account_id" uuid NOT NULL, "event_id" character varying(255) NOT NULL, "event_type" character varying(64) NOT NULL, "body" text NOT NULL, "state" character varying(16) NOT NULL DEFAULT 'pending', "attempts" integer NOT NULL DEFAULT '0', "next_attempt_at" TIMESTAMP WITH TIME ZONE NOT NULL, "lease_until" TIMESTAMP WITH TIME ZONE, "lease_token" uuid, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "webhook_deliveries_due_idx" ON "webhooks"."webhook_deliveries" ("next_attempt_at") WHERE "state" = 'pending'`,
    );
    await queryRunner.query(
      `CREATE INDEX "webhook_deliveries_settled_idx" ON "webhooks"."webhook_deliveries" ("updated_at") WHERE "state" <> 'pending'`,
    );
    await queryRunner.query(
      `CREATE INDEX "webhook_deliveries_webhook_id_seq_idx" ON "webhooks"."webhook_deliveries" ("webhook_id", "seq") `,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "webhook_deliveries_event_id_webhook_id_key" ON "webhooks"."webhook_deliveries" ("event_id", "webhook_id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "webhooks"."webhook_attempts" ("seq" bigint GENERATED ALWAYS AS IDENTITY NOT NULL, "delivery_id" uuid NOT NULL, "webhook_id" uuid NOT NULL, "event_id" character varying(255) NOT NULL, "event_type" character varying(64) NOT NULL, "attempt" integer NOT NULL, "attempted_at" TIMESTAMP WITH TIME ZONE NOT NULL, "response_status" integer, "error" character varying(255), "duration_ms" integer NOT NULL, "response_body" text NOT NULL DEFAULT '', "next_retry_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "webhook_attempts_pkey" PRIMARY KEY ("seq"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "webhook_attempts_delivery_id_idx" ON "webhooks"."webhook_attempts" ("delivery_id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "webhook_attempts_webhook_id_seq_idx" ON "webhooks"."webhook_attempts" ("webhook_id", "seq") `,
    );
    await queryRunner.query(
      `ALTER TABLE "webhooks"."webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_webhook_id_fkey" FOREIGN KEY ("webhook_id") REFERENCES "webhooks"."webhooks"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "webhooks"."webhook_attempts" ADD CONSTRAINT "webhook_attempts_delivery_id_fkey" FOREIGN KEY ("delivery_id") REFERENCES "webhooks"."webhook_deliveries"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "webhooks"."webhook_attempts"`);
    await queryRunner.query(`DROP TABLE "webhooks"."webhook_deliveries"`);
  }
}
