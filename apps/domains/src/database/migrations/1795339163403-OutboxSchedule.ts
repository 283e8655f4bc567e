import type { MigrationInterface, QueryRunner } from 'typeorm';

export class OutboxSchedule1795339163403 implements MigrationInterface {
  name = 'OutboxSchedule1795339163403';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "domains"."outbox_pending_seq_idx"`);
    await queryRunner.query(
      `ALTER TABLE "domains"."outbox" ADD "stream" character varying(64) NOT NULL DEFAULT 'EVENTS'`,
    );
    await queryRunner.query(
      `ALTER TABLE "domains"."outbox" ADD "available_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now()`,
    );
    await queryRunner.query(
      `ALTER TABLE "domains"."outbox" ADD "cancelled_at" TIMESTAMP WITH TIME ZONE`,
    );
    await queryRunner.query(
      `CREATE INDEX "outbox_cancelled_at_idx" ON "domains"."outbox"  ("cancelled_at") WHERE cancelled_at IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX "outbox_due_idx" ON "domains"."outbox"  ("available_at", "seq") WHERE published_at IS NULL AND cancelled_at IS NULL`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "domains"."outbox_due_idx"`);
    await queryRunner.query(`DROP INDEX "domains"."outbox_cancelled_at_idx"`);
    await queryRunner.query(`ALTER TABLE "domains"."outbox" DROP COLUMN "cancelled_at"`);
    await queryRunner.query(`ALTER TABLE "domains"."outbox" DROP COLUMN "available_at"`);
    await queryRunner.query(`ALTER TABLE "domains"."outbox" DROP COLUMN "stream"`);
    await queryRunner.query(
      `CREATE INDEX "outbox_pending_seq_idx" ON "domains"."outbox" USING btree ("seq") WHERE (published_at IS NULL)`,
    );
  }
}
