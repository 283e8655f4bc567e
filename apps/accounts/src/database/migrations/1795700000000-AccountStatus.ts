import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Suspension, soft deletion, monthly credit and last activity of accounts (spec 3.1, 2.6). */
export class AccountStatus1795700000000 implements MigrationInterface {
  name = 'AccountStatus1795700000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "accounts"."accounts" ADD "monthly_credit" integer NOT NULL DEFAULT 0`,
    );
    await queryRunner.query(
      `ALTER TABLE "accounts"."accounts" ADD "suspended_at" TIMESTAMP WITH TIME ZONE`,
    );
    await queryRunner.query(
      `ALTER TABLE "accounts"."accounts" ADD "suspension_reason" character varying(500)`,
    );
    await queryRunner.query(
      `ALTER TABLE "accounts"."accounts" ADD "deleted_at" TIMESTAMP WITH TIME ZONE`,
    );
    await queryRunner.query(
      `ALTER TABLE "accounts"."accounts" ADD "last_activity_at" TIMESTAMP WITH TIME ZONE`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    for (const column of [
      'last_activity_at',
      'deleted_at',
      'suspension_reason',
      'suspended_at',
      'monthly_credit',
    ]) {
      await queryRunner.query(`ALTER TABLE "accounts"."accounts" DROP COLUMN "${column}"`);
    }
  }
}
