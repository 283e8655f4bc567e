import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Reception counts per account and billing period (spec 2.6), and the ids of the messages counted
 * in each period, which make counting a redelivered or duplicated event a no-op.
 */
export class ReceptionUsage1795800000000 implements MigrationInterface {
  name = 'ReceptionUsage1795800000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "accounts"."reception_counts" (
        "account_id" uuid NOT NULL,
        "period_start" date NOT NULL,
        "reception_count" bigint NOT NULL,
        CONSTRAINT "reception_counts_pkey" PRIMARY KEY ("account_id", "period_start")
      )`);
    await queryRunner.query(`
      CREATE TABLE "accounts"."counted_receptions" (
        "period_start" date NOT NULL,
        "message_id" uuid NOT NULL,
        CONSTRAINT "counted_receptions_pkey" PRIMARY KEY ("period_start", "message_id")
      )`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "accounts"."counted_receptions"`);
    await queryRunner.query(`DROP TABLE "accounts"."reception_counts"`);
  }
}
