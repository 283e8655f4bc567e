import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Asynchronous bounces and complaints: the reports applied, and the mail that matched nothing. */
export class InboundReports1795700000017 implements MigrationInterface {
  name = 'InboundReports1795700000017';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "delivery"."inbound_reports" ("inbound_id" uuid NOT NULL, "message_id" uuid NOT NULL, "outcome" character varying(16) NOT NULL, "handled_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "inbound_reports_pkey" PRIMARY KEY ("inbound_id", "message_id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "inbound_reports_handled_at_idx" ON "delivery"."inbound_reports" ("handled_at")`,
    );
    await queryRunner.query(
      `CREATE TABLE "delivery"."inbound_unmatched" ("id" uuid NOT NULL, "inbound_id" uuid NOT NULL, "kind" character varying(16) NOT NULL, "reason" text NOT NULL, "envelope_from" character varying(320) NOT NULL, "recipient" character varying(320) NOT NULL, "spool_name" character varying(255) NOT NULL, "size" integer NOT NULL, "content" bytea, "received_at" TIMESTAMP WITH TIME ZONE NOT NULL, "stored_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "inbound_unmatched_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "inbound_unmatched_inbound_id_recipient_key" ON "delivery"."inbound_unmatched" ("inbound_id", "recipient")`,
    );
    await queryRunner.query(
      `CREATE INDEX "inbound_unmatched_stored_at_idx" ON "delivery"."inbound_unmatched" ("stored_at")`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "delivery"."inbound_unmatched_stored_at_idx"`);
    await queryRunner.query(`DROP INDEX "delivery"."inbound_unmatched_inbound_id_recipient_key"`);
    await queryRunner.query(`DROP TABLE "delivery"."inbound_unmatched"`);
    await queryRunner.query(`DROP INDEX "delivery"."inbound_reports_handled_at_idx"`);
    await queryRunner.query(`DROP TABLE "delivery"."inbound_reports"`);
  }
}
