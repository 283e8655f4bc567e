import type { MigrationInterface, QueryRunner } from 'typeorm';

/** processed_events becomes the shared inbox (ProcessedEventEntity): its rows are kept. */
export class SharedInbox1795618739890 implements MigrationInterface {
  name = 'SharedInbox1795618739890';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "suppressions"."processed_events" ADD "type" character varying(64)`,
    );
    await queryRunner.query(`ALTER TABLE "suppressions"."processed_events" ADD "record_id" uuid`);
    await queryRunner.query(
      `CREATE INDEX "processed_events_record_id_idx" ON "suppressions"."processed_events" ("record_id")`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "suppressions"."processed_events_record_id_idx"`);
    await queryRunner.query(
      `ALTER TABLE "suppressions"."processed_events" DROP COLUMN "record_id"`,
    );
    await queryRunner.query(`ALTER TABLE "suppressions"."processed_events" DROP COLUMN "type"`);
  }
}
