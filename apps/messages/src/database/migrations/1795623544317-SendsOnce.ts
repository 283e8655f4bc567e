import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each request is stored once (sends, send_attachments, send_links) and its messages hold what
 * differs per recipient (send_id, recipient_name, substitutions); their content is composed when
 * read. Messages stored before keep their raw content in message_contents (send_id null).
 */
export class SendsOnce1795623544317 implements MigrationInterface {
  name = 'SendsOnce1795623544317';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "messages"."sends" ("id" uuid NOT NULL, "account_id" uuid NOT NULL, "kind" character varying(16) NOT NULL, "api" character varying(2) NOT NULL, "accepted_at" TIMESTAMP WITH TIME ZONE NOT NULL, "from_address" jsonb NOT NULL, "reply_to" jsonb, "to_addresses" jsonb, "cc_addresses" jsonb, "subject" text, "text_content" text, "html_content" text, "amp_content" text, "headers" json, "substitutions" json, "templated" boolean NOT NULL, "purge_at" TIMESTAMP WITH TIME ZONE NOT NULL, "purged_at" TIMESTAMP WITH TIME ZONE, "retain_until" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "sends_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "sends_retain_until_idx" ON "messages"."sends"  ("retain_until") `,
    );
    await queryRunner.query(
      `CREATE INDEX "sends_purge_at_idx" ON "messages"."sends"  ("purge_at") WHERE purged_at IS NULL`,
    );
    await queryRunner.query(
      `CREATE TABLE "messages"."send_attachments" ("send_id" uuid NOT NULL, "position" integer NOT NULL, "file_name" text NOT NULL, "content_type" text NOT NULL, "content_id" text, "content_disposition" text, "content" bytea NOT NULL, CONSTRAINT "send_attachments_pkey" PRIMARY KEY ("send_id", "position"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "messages"."send_links" ("send_id" uuid NOT NULL, "position" integer NOT NULL, "url" text NOT NULL, CONSTRAINT "send_links_pkey" PRIMARY KEY ("send_id", "position"))`,
    );
    await queryRunner.query(`ALTER TABLE "messages"."messages" ADD "send_id" uuid`);
    await queryRunner.query(`ALTER TABLE "messages"."messages" ADD "recipient_name" text`);
    await queryRunner.query(`ALTER TABLE "messages"."messages" ADD "substitutions" json`);
    await queryRunner.query(
      `ALTER TABLE "messages"."messages" ADD "content_purged_at" TIMESTAMP WITH TIME ZONE`,
    );
    await queryRunner.query(
      `CREATE INDEX "messages_send_id_idx" ON "messages"."messages"  ("send_id") `,
    );
    await queryRunner.query(
      `ALTER TABLE "messages"."messages" ADD CONSTRAINT "messages_send_id_fkey" FOREIGN KEY ("send_id") REFERENCES "messages"."sends"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "messages"."send_attachments" ADD CONSTRAINT "send_attachments_send_id_fkey" FOREIGN KEY ("send_id") REFERENCES "messages"."sends"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "messages"."send_links" ADD CONSTRAINT "send_links_send_id_fkey" FOREIGN KEY ("send_id") REFERENCES "messages"."sends"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "messages"."send_links" DROP CONSTRAINT "send_links_send_id_fkey"`,
    );
    await queryRunner.query(
      `ALTER TABLE "messages"."send_attachments" DROP CONSTRAINT "send_attachments_send_id_fkey"`,
    );
    await queryRunner.query(
      `ALTER TABLE "messages"."messages" DROP CONSTRAINT "messages_send_id_fkey"`,
    );
    await queryRunner.query(`DROP INDEX "messages"."messages_send_id_idx"`);
    await queryRunner.query(`ALTER TABLE "messages"."messages" DROP COLUMN "content_purged_at"`);
    await queryRunner.query(`ALTER TABLE "messages"."messages" DROP COLUMN "substitutions"`);
    await queryRunner.query(`ALTER TABLE "messages"."messages" DROP COLUMN "recipient_name"`);
    await queryRunner.query(`ALTER TABLE "messages"."messages" DROP COLUMN "send_id"`);
    await queryRunner.query(`DROP TABLE "messages"."send_links"`);
    await queryRunner.query(`DROP TABLE "messages"."send_attachments"`);
    await queryRunner.query(`DROP INDEX "messages"."sends_purge_at_idx"`);
    await queryRunner.query(`DROP INDEX "messages"."sends_retain_until_idx"`);
    await queryRunner.query(`DROP TABLE "messages"."sends"`);
  }
}
