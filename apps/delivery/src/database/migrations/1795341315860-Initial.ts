import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Initial1795341315860 implements MigrationInterface {
  name = 'Initial1795341315860';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "delivery"."outbox" ("id" uuid NOT NULL, "seq" bigint GENERATED ALWAYS AS IDENTITY NOT NULL, "stream" character varying(64) NOT NULL DEFAULT 'EVENTS', "subject" character varying(255) NOT NULL, "payload" jsonb NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "available_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "published_at" TIMESTAMP WITH TIME ZONE, "cancelled_at" TIMESTAMP WITH TIME ZONE, "failed_attempts" integer NOT NULL DEFAULT '0', "last_error" text, CONSTRAINT "outbox_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "outbox_cancelled_at_idx" ON "delivery"."outbox"  ("cancelled_at") WHERE cancelled_at IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX "outbox_published_at_idx" ON "delivery"."outbox"  ("published_at") WHERE published_at IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX "outbox_due_idx" ON "delivery"."outbox"  ("available_at", "seq") WHERE published_at IS NULL AND cancelled_at IS NULL`,
    );
    await queryRunner.query(
      `CREATE TABLE "delivery"."attempts" ("id" uuid NOT NULL, "message_id" uuid NOT NULL, "account_id" uuid NOT NULL, "attempt" integer NOT NULL, "state" character varying(16) NOT NULL, "claim_token" uuid, "lease_until" TIMESTAMP WITH TIME ZONE, "started_at" TIMESTAMP WITH TIME ZONE NOT NULL, "finished_at" TIMESTAMP WITH TIME ZONE, "outcome" character varying(16), "status" character varying(32), "remote_host" character varying(255) NOT NULL DEFAULT '', "reply" text NOT NULL DEFAULT '', "bounce_classification" character varying(8), "tls" boolean, "sandbox" boolean NOT NULL DEFAULT false, "delivered_to" text array NOT NULL DEFAULT '{}', "next_attempt_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "attempts_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "attempts_lease_until_idx" ON "delivery"."attempts"  ("lease_until") WHERE state = 'in_progress'`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "attempts_message_id_attempt_key" ON "delivery"."attempts"  ("message_id", "attempt") `,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "delivery"."attempts_message_id_attempt_key"`);
    await queryRunner.query(`DROP INDEX "delivery"."attempts_lease_until_idx"`);
    await queryRunner.query(`DROP TABLE "delivery"."attempts"`);
    await queryRunner.query(`DROP INDEX "delivery"."outbox_due_idx"`);
    await queryRunner.query(`DROP INDEX "delivery"."outbox_published_at_idx"`);
    await queryRunner.query(`DROP INDEX "delivery"."outbox_cancelled_at_idx"`);
    await queryRunner.query(`DROP TABLE "delivery"."outbox"`);
  }
}
