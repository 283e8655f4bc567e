import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The service kit's tables: the outbox, the inbox (processed events) and the dead letters. */
export class Initial1795652377940 implements MigrationInterface {
  name = 'Initial1795652377940';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "routes"."outbox" ("id" uuid NOT NULL, "seq" bigint GENERATED ALWAYS AS IDENTITY NOT NULL, "stream" character varying(64) NOT NULL DEFAULT 'EVENTS', "subject" character varying(255) NOT NULL, "payload" jsonb NOT NULL, "trace" jsonb, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "available_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "published_at" TIMESTAMP WITH TIME ZONE, "cancelled_at" TIMESTAMP WITH TIME ZONE, "failed_attempts" integer NOT NULL DEFAULT '0', "last_error" text, CONSTRAINT "outbox_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "outbox_cancelled_at_idx" ON "routes"."outbox" ("cancelled_at") WHERE cancelled_at IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX "outbox_published_at_idx" ON "routes"."outbox" ("published_at") WHERE published_at IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX "outbox_due_idx" ON "routes"."outbox" ("available_at", "seq") WHERE published_at IS NULL AND cancelled_at IS NULL`,
    );
    await queryRunner.query(
      `CREATE TABLE "routes"."processed_events" ("event_id" character varying(255) NOT NULL, "type" character varying(64), "record_id" uuid, "processed_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "processed_events_pkey" PRIMARY KEY ("event_id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "processed_events_processed_at_idx" ON "routes"."processed_events" ("processed_at")`,
    );
    await queryRunner.query(
      `CREATE INDEX "processed_events_record_id_idx" ON "routes"."processed_events" ("record_id")`,
    );
    await queryRunner.query(
      `CREATE TABLE "routes"."dead_letters" ("id" uuid NOT NULL, "durable" character varying(255) NOT NULL, "stream" character varying(64) NOT NULL, "subject" character varying(255) NOT NULL, "payload" bytea NOT NULL, "headers" jsonb NOT NULL, "error" text NOT NULL, "deliveries" integer NOT NULL, "failed_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "dead_letters_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "dead_letters_failed_at_idx" ON "routes"."dead_letters" ("failed_at")`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "routes"."dead_letters"`);
    await queryRunner.query(`DROP TABLE "routes"."processed_events"`);
    await queryRunner.query(`DROP TABLE "routes"."outbox"`);
  }
}
