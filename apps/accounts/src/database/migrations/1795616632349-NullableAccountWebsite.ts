import type { MigrationInterface, QueryRunner } from 'typeorm';

/** An account without a website stores null, not '' (the record answers null). */
export class NullableAccountWebsite1795616632349 implements MigrationInterface {
  name = 'NullableAccountWebsite1795616632349';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "accounts"."accounts" ALTER COLUMN "website" DROP NOT NULL`,
    );
    await queryRunner.query(
      `ALTER TABLE "accounts"."accounts" ALTER COLUMN "website" DROP DEFAULT`,
    );
    await queryRunner.query(
      `UPDATE "accounts"."accounts" SET "website" = NULL WHERE "website" = ''`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `UPDATE "accounts"."accounts" SET "website" = '' WHERE "website" IS NULL`,
    );
    await queryRunner.query(
      `ALTER TABLE "accounts"."accounts" ALTER COLUMN "website" SET DEFAULT ''`,
    );
    await queryRunner.query(
      `ALTER TABLE "accounts"."accounts" ALTER COLUMN "website" SET NOT NULL`,
    );
  }
}
