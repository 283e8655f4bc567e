import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * processed_events becomes the shared inbox (ProcessedEventEntity): its rows are kept, the
 * message they belong to is their record (still deleted with it), type and record optional.
 */
export class SharedInbox1795618739889 implements MigrationInterface {
  name = 'SharedInbox1795618739889';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "messages"."processed_events" RENAME COLUMN "message_id" TO "record_id"`,
    );
    await queryRunner.query(
      `ALTER TABLE "messages"."processed_events" ALTER COLUMN "record_id" DROP NOT NULL`,
    );
    await queryRunner.query(
      `ALTER TABLE "messages"."processed_events" ALTER COLUMN "type" DROP NOT NULL`,
    );
    await queryRunner.query(
      `ALTER INDEX "messages"."processed_events_message_id_idx" RENAME TO "processed_events_record_id_idx"`,
    );
    await queryRunner.query(
      `ALTER TABLE "messages"."processed_events" RENAME CONSTRAINT "processed_events_message_id_fkey" TO "processed_events_record_id_fkey"`,
    );
    await queryRunner.query(
      `CREATE INDEX "processed_events_processed_at_idx" ON "messages"."processed_events" ("processed_at")`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "messages"."processed_events_processed_at_idx"`);
    await queryRunner.query(
      `ALTER TABLE "messages"."processed_events" RENAME CONSTRAINT "processed_events_record_id_fkey" TO "processed_events_message_id_fkey"`,
    );
    await queryRunner.query(
      `ALTER INDEX "messages"."processed_events_record_id_idx" RENAME TO "processed_events_message_id_idx"`,
    );
    await queryRunner.query(
      `ALTER TABLE "messages"."processed_events" ALTER COLUMN "type" SET NOT NULL`,
    );
    await queryRunner.query(
      `ALTER TABLE "messages"."processed_events" ALTER COLUMN "record_id" SET NOT NULL`,
    );
    await queryRunner.query(
      `ALTER TABLE "messages"."processed_events" RENAME COLUMN "record_id" TO "message_id"`,
    );
  }
}
