import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Messages accepted per capped account and billing period (calendar month, UTC): the monthly
 * credit is reserved here, in the transaction that stores the send. `last_granted` is what the
 * latest reservation got, read back by that reservation's statement.
 */
export class MonthlyCredit1795800000000 implements MigrationInterface {
  name = 'MonthlyCredit1795800000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "messages"."credit_usage" (
        "account_id" uuid NOT NULL,
        "period_start" date NOT NULL,
        "used" integer NOT NULL,
        "last_granted" integer NOT NULL,
        CONSTRAINT "credit_usage_pkey" PRIMARY KEY ("account_id", "period_start")
      )`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "messages"."credit_usage"`);
  }
}
