import type { MigrationInterface, QueryRunner } from 'typeorm';

export class AttemptBouncedTo1795346272478 implements MigrationInterface {
  name = 'AttemptBouncedTo1795346272478';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "delivery"."attempts" ADD "bounced_to" text array NOT NULL DEFAULT '{}'`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "delivery"."attempts" DROP COLUMN "bounced_to"`);
  }
}
