import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Two indexes every message insert maintained and no query needs: `seq` alone (lists read it
 * after the account, through messages_account_id_seq_idx) and the Message-ID header (a filter
 * on it finds the message by the id the header carries, through the primary key).
 */
export class LeanerMessageIndexes1795700000000 implements MigrationInterface {
  name = 'LeanerMessageIndexes1795700000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "messages"."messages_account_id_message_id_header_idx"`);
    await queryRunner.query(`DROP INDEX "messages"."messages_seq_key"`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE UNIQUE INDEX "messages_seq_key" ON "messages"."messages"  ("seq") `,
    );
    await queryRunner.query(
      `CREATE INDEX "messages_account_id_message_id_header_idx" ON "messages"."messages"  ("account_id", "message_id_header") `,
    );
  }
}
