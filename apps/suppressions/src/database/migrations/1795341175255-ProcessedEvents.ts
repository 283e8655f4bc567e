import type { MigrationInterface, QueryRunner } from 'typeorm';

export class ProcessedEvents1795341175255 implements MigrationInterface {
  name = 'ProcessedEvents1795341175255';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "suppressions"."processed_events" ("event_id" character varying(255) NOT NULL, "processed_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "processed_events_pkey" PRIMARY KEY ("event_id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "processed_events_processed_at_idx" ON "suppressions"."processed_events"  ("processed_at") `,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "suppressions"."processed_events_processed_at_idx"`);
    await queryRunner.query(`DROP TABLE "suppressions"."processed_events"`);
  }
}
