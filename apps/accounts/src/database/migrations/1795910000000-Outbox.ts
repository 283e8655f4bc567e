import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The outbox: events the service publishes (an API key's allow list changed) commit with it. */
export class Outbox1795910000000 implements MigrationInterface {
  name = 'Outbox1795910000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "accounts"."outbox" ("id" uuid NOT NULL, "seq" bigint GENERATED ALWAYS AS IDENTITY NOT NULL, "stream" character varying(64) NOT NULL DEFAULT 'EVENTS', "subject" character varying(255) NOT NULL, "payload" jsonb NOT NULL, "trace" jsonb, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "available_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "published_at" TIMESTAMP WITH TIME ZONE, "cancelled_at" TIMESTAMP WITH TIME ZONE, "failed_attempts" integer NOT NULL DEFAULT '0', "last_error" text, CONSTRAINT "outbox_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "outbox_cancelled_at_idx" ON "accounts"."outbox" ("cancelled_at") WHERE cancelled_at IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX "outbox_published_at_idx" ON "accounts"."outbox" ("published_at") WHERE published_at IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX "outbox_due_idx" ON "accounts"."outbox" ("available_at", "seq") WHERE published_at IS NULL AND cancelled_at IS NULL`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "accounts"."outbox"`);
  }
}
