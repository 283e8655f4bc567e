import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Outbox rows keep the trace context (request id, traceparent, account) they were written in. */
export class OutboxTrace1795618211975 implements MigrationInterface {
  name = 'OutboxTrace1795618211975';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "domains"."outbox" ADD "trace" jsonb`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "domains"."outbox" DROP COLUMN "trace"`);
  }
}
