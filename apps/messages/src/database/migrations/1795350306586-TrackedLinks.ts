import type { MigrationInterface, QueryRunner } from 'typeorm';

export class TrackedLinks1795350306586 implements MigrationInterface {
  name = 'TrackedLinks1795350306586';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "messages"."tracked_links" ("message_id" uuid NOT NULL, "position" integer NOT NULL, "url" text NOT NULL, CONSTRAINT "tracked_links_pkey" PRIMARY KEY ("message_id", "position"))`,
    );
    await queryRunner.query(
      `ALTER TABLE "messages"."tracked_links" ADD CONSTRAINT "tracked_links_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "messages"."messages"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "messages"."tracked_links" DROP CONSTRAINT "tracked_links_message_id_fkey"`,
    );
    await queryRunner.query(`DROP TABLE "messages"."tracked_links"`);
  }
}
