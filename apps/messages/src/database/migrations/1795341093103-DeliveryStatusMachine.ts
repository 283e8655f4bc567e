import type { MigrationInterface, QueryRunner } from 'typeorm';

export class DeliveryStatusMachine1795341093103 implements MigrationInterface {
  name = 'DeliveryStatusMachine1795341093103';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "messages"."processed_events" ("event_id" character varying(255) NOT NULL, "message_id" uuid NOT NULL, "type" character varying(64) NOT NULL, "processed_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "processed_events_pkey" PRIMARY KEY ("event_id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "processed_events_message_id_idx" ON "messages"."processed_events"  ("message_id") `,
    );
    await queryRunner.query(
      `ALTER TABLE "messages"."processed_events" ADD CONSTRAINT "processed_events_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "messages"."messages"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "messages"."processed_events" DROP CONSTRAINT "processed_events_message_id_fkey"`,
    );
    await queryRunner.query(`DROP INDEX "messages"."processed_events_message_id_idx"`);
    await queryRunner.query(`DROP TABLE "messages"."processed_events"`);
  }
}
