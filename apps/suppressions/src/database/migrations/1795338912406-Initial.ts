import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Initial1795338912406 implements MigrationInterface {
  name = 'Initial1795338912406';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "suppressions"."outbox" ("id" uuid NOT NULL, "seq" bigint GENERATED ALWAYS AS IDENTITY NOT NULL, "stream" character varying(64) NOT NULL DEFAULT 'EVENTS', "subject" character varying(255) NOT NULL, "payload" jsonb NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "available_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "published_at" TIMESTAMP WITH TIME ZONE, "cancelled_at" TIMESTAMP WITH TIME ZONE, "failed_attempts" integer NOT NULL DEFAULT '0', "last_error" text, CONSTRAINT "outbox_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "outbox_cancelled_at_idx" ON "suppressions"."outbox"  ("cancelled_at") WHERE cancelled_at IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX "outbox_published_at_idx" ON "suppressions"."outbox"  ("published_at") WHERE published_at IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX "outbox_due_idx" ON "suppressions"."outbox"  ("available_at", "seq") WHERE published_at IS NULL AND cancelled_at IS NULL`,
    );
    await queryRunner.query(
      `CREATE TABLE "suppressions"."suppressions" ("id" uuid NOT NULL, "seq" bigint GENERATED ALWAYS AS IDENTITY NOT NULL, "account_id" uuid NOT NULL, "email" character varying(320) NOT NULL, "domain" character varying(253), "reason" character varying(255), "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, "source" character varying(16) NOT NULL, CONSTRAINT "suppressions_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "suppressions_seq_key" ON "suppressions"."suppressions"  ("seq") `,
    );
    await queryRunner.query(
      `CREATE INDEX "suppressions_expires_at_idx" ON "suppressions"."suppressions"  ("expires_at") `,
    );
    await queryRunner.query(
      `CREATE INDEX "suppressions_account_id_domain_seq_idx" ON "suppressions"."suppressions"  ("account_id", "domain", "seq") `,
    );
    await queryRunner.query(
      `CREATE INDEX "suppressions_account_id_seq_idx" ON "suppressions"."suppressions"  ("account_id", "seq") `,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "suppressions_account_id_email_domain_key" ON "suppressions"."suppressions"  ("account_id", "email", "domain") WHERE domain IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "suppressions_account_id_email_global_key" ON "suppressions"."suppressions"  ("account_id", "email") WHERE domain IS NULL`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "suppressions"."suppressions_account_id_email_global_key"`);
    await queryRunner.query(`DROP INDEX "suppressions"."suppressions_account_id_email_domain_key"`);
    await queryRunner.query(`DROP INDEX "suppressions"."suppressions_account_id_seq_idx"`);
    await queryRunner.query(`DROP INDEX "suppressions"."suppressions_account_id_domain_seq_idx"`);
    await queryRunner.query(`DROP INDEX "suppressions"."suppressions_expires_at_idx"`);
    await queryRunner.query(`DROP INDEX "suppressions"."suppressions_seq_key"`);
    await queryRunner.query(`DROP TABLE "suppressions"."suppressions"`);
    await queryRunner.query(`DROP INDEX "suppressions"."outbox_due_idx"`);
    await queryRunner.query(`DROP INDEX "suppressions"."outbox_published_at_idx"`);
    await queryRunner.query(`DROP INDEX "suppressions"."outbox_cancelled_at_idx"`);
    await queryRunner.query(`DROP TABLE "suppressions"."outbox"`);
  }
}
