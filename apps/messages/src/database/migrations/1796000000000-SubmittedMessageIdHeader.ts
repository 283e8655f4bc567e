import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A send submitted over SMTP keeps the Message-ID header its messages are delivered with (the
 * client's or the one set at accept, lowercase) so that the messages list's `message_id_header`
 * filter finds its messages; null for an API send, whose messages carry their own `<id@domain>`.
 */
export class SubmittedMessageIdHeader1796000000000 implements MigrationInterface {
  name = 'SubmittedMessageIdHeader1796000000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "messages"."sends" ADD "message_id_header" text`);
    await queryRunner.query(
      `CREATE INDEX "sends_account_id_message_id_header_idx" ON "messages"."sends" ("account_id", "message_id_header") WHERE message_id_header IS NOT NULL`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "messages"."sends_account_id_message_id_header_idx"`);
    await queryRunner.query(`ALTER TABLE "messages"."sends" DROP COLUMN "message_id_header"`);
  }
}
