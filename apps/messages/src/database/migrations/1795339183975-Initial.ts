import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Initial1795339183975 implements MigrationInterface {
  name = 'Initial1795339183975';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "messages"."outbox" ("id" uuid NOT NULL, "seq" bigint GENERATED ALWAYS AS IDENTITY NOT NULL, "stream" character varying(64) NOT NULL DEFAULT 'EVENTS', "subject" character varying(255) NOT NULL, "payload" jsonb NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "available_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "published_at" TIMESTAMP WITH TIME ZONE, "cancelled_at" TIMESTAMP WITH TIME ZONE, "failed_attempts" integer NOT NULL DEFAULT '0', "last_error" text, CONSTRAINT "outbox_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "outbox_cancelled_at_idx" ON "messages"."outbox"  ("cancelled_at") WHERE cancelled_at IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX "outbox_published_at_idx" ON "messages"."outbox"  ("published_at") WHERE published_at IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX "outbox_due_idx" ON "messages"."outbox"  ("available_at", "seq") WHERE published_at IS NULL AND cancelled_at IS NULL`,
    );
    await queryRunner.query(
      `CREATE TABLE "messages"."messages" ("id" uuid NOT NULL, "seq" bigint GENERATED ALWAYS AS IDENTITY NOT NULL, "account_id" uuid NOT NULL, "domain_id" uuid NOT NULL, "domain" character varying(253) NOT NULL, "kind" character varying(16) NOT NULL, "api" character varying(2) NOT NULL, "credential_id" uuid, "sender" character varying(254) NOT NULL, "recipient" character varying(254) NOT NULL, "envelope_recipients" text array NOT NULL, "subject" text NOT NULL, "tags" text array NOT NULL DEFAULT '{}', "status" character varying(32) NOT NULL, "message_id_header" character varying(320) NOT NULL, "sandbox" boolean NOT NULL DEFAULT false, "sandbox_result" character varying(16), "track_opens" boolean NOT NULL, "track_clicks" boolean NOT NULL, "retention_metadata_days" smallint NOT NULL, "retention_data_days" smallint NOT NULL, "first_attempt_at" TIMESTAMP WITH TIME ZONE, "expires_at" TIMESTAMP WITH TIME ZONE, "retain_until" TIMESTAMP WITH TIME ZONE NOT NULL, "job_id" uuid NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "sent_at" TIMESTAMP WITH TIME ZONE, "delivered_at" TIMESTAMP WITH TIME ZONE, "num_attempts" integer NOT NULL DEFAULT '0', "delivery_attempts" jsonb NOT NULL DEFAULT '[]', "open_count" integer NOT NULL DEFAULT '0', "click_count" integer NOT NULL DEFAULT '0', "bounce_classification" character varying(64), CONSTRAINT "messages_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "messages_seq_key" ON "messages"."messages"  ("seq") `,
    );
    await queryRunner.query(
      `CREATE INDEX "messages_retain_until_idx" ON "messages"."messages"  ("retain_until") `,
    );
    await queryRunner.query(
      `CREATE INDEX "messages_tags_idx" ON "messages"."messages" USING gin ("tags") `,
    );
    await queryRunner.query(
      `CREATE INDEX "messages_envelope_recipients_idx" ON "messages"."messages" USING gin ("envelope_recipients") `,
    );
    await queryRunner.query(
      `CREATE INDEX "messages_account_id_message_id_header_idx" ON "messages"."messages"  ("account_id", "message_id_header") `,
    );
    await queryRunner.query(
      `CREATE INDEX "messages_account_id_seq_idx" ON "messages"."messages"  ("account_id", "seq") `,
    );
    await queryRunner.query(
      `CREATE TABLE "messages"."message_contents" ("message_id" uuid NOT NULL, "raw" bytea, "size" integer NOT NULL, "purge_at" TIMESTAMP WITH TIME ZONE NOT NULL, "purged_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "message_contents_pkey" PRIMARY KEY ("message_id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "message_contents_purge_at_idx" ON "messages"."message_contents"  ("purge_at") WHERE raw IS NOT NULL`,
    );
    await queryRunner.query(
      `ALTER TABLE "messages"."message_contents" ADD CONSTRAINT "message_contents_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "messages"."messages"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "messages"."message_contents" DROP CONSTRAINT "message_contents_message_id_fkey"`,
    );
    await queryRunner.query(`DROP INDEX "messages"."message_contents_purge_at_idx"`);
    await queryRunner.query(`DROP TABLE "messages"."message_contents"`);
    await queryRunner.query(`DROP INDEX "messages"."messages_account_id_seq_idx"`);
    await queryRunner.query(`DROP INDEX "messages"."messages_account_id_message_id_header_idx"`);
    await queryRunner.query(`DROP INDEX "messages"."messages_envelope_recipients_idx"`);
    await queryRunner.query(`DROP INDEX "messages"."messages_tags_idx"`);
    await queryRunner.query(`DROP INDEX "messages"."messages_retain_until_idx"`);
    await queryRunner.query(`DROP INDEX "messages"."messages_seq_key"`);
    await queryRunner.query(`DROP TABLE "messages"."messages"`);
    await queryRunner.query(`DROP INDEX "messages"."outbox_due_idx"`);
    await queryRunner.query(`DROP INDEX "messages"."outbox_published_at_idx"`);
    await queryRunner.query(`DROP INDEX "messages"."outbox_cancelled_at_idx"`);
    await queryRunner.query(`DROP TABLE "messages"."outbox"`);
  }
}
