import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A send submitted over SMTP keeps the client's message as sent (control headers stripped,
 * Message-ID and Date set when needed) instead of composition sources; its messages are
 * delivered as those bytes. Null for sends of the API and once data retention purged it.
 */
export class SubmittedRaw1795900000000 implements MigrationInterface {
  name = 'SubmittedRaw1795900000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "messages"."sends" ADD "raw_content" bytea`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "messages"."sends" DROP COLUMN "raw_content"`);
  }
}
