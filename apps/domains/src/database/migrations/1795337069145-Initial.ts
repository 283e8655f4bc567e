import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Initial1795337069145 implements MigrationInterface {
  name = 'Initial1795337069145';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "domains"."outbox" ("id" uuid NOT NULL, "seq" bigint GENERATED ALWAYS AS IDENTITY NOT NULL, "subject" character varying(255) NOT NULL, "payload" jsonb NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "published_at" TIMESTAMP WITH TIME ZONE, "failed_attempts" integer NOT NULL DEFAULT '0', "last_error" text, CONSTRAINT "outbox_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "outbox_published_at_idx" ON "domains"."outbox"  ("published_at") WHERE published_at IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX "outbox_pending_seq_idx" ON "domains"."outbox"  ("seq") WHERE published_at IS NULL`,
    );
    await queryRunner.query(
      `CREATE TABLE "domains"."domains" ("id" uuid NOT NULL, "seq" bigint GENERATED ALWAYS AS IDENTITY NOT NULL, "account_id" uuid NOT NULL, "name" character varying(253) NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "version" integer NOT NULL DEFAULT '1', "tracking_subdomain" character varying(200), "return_path_subdomain" character varying(200), "subscription_subdomain" character varying(200), "media_subdomain" character varying(200), "dkim_rotation_interval_days" smallint, "dkim_selector" character varying(62), "dkim_default_selector" character varying(62) NOT NULL, "dkim_public_key" text NOT NULL, "dkim_private_key_sealed" bytea NOT NULL, "dns_valid" boolean NOT NULL DEFAULT false, "last_dns_check_at" TIMESTAMP WITH TIME ZONE, "dns_checks" jsonb NOT NULL DEFAULT '{}', "next_check_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "tracking_locked" boolean NOT NULL DEFAULT false, "return_path_locked" boolean NOT NULL DEFAULT false, "subscription_locked" boolean NOT NULL DEFAULT false, "media_locked" boolean NOT NULL DEFAULT false, "dkim_selector_locked" boolean NOT NULL DEFAULT false, CONSTRAINT "domains_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "domains_seq_key" ON "domains"."domains"  ("seq") `,
    );
    await queryRunner.query(
      `CREATE INDEX "domains_next_check_at_idx" ON "domains"."domains"  ("next_check_at") `,
    );
    await queryRunner.query(
      `CREATE INDEX "domains_account_id_seq_idx" ON "domains"."domains"  ("account_id", "seq") `,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "domains_account_id_name_key" ON "domains"."domains"  ("account_id", "name") `,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "domains"."domains_account_id_name_key"`);
    await queryRunner.query(`DROP INDEX "domains"."domains_account_id_seq_idx"`);
    await queryRunner.query(`DROP INDEX "domains"."domains_next_check_at_idx"`);
    await queryRunner.query(`DROP INDEX "domains"."domains_seq_key"`);
    await queryRunner.query(`DROP TABLE "domains"."domains"`);
    await queryRunner.query(`DROP INDEX "domains"."outbox_pending_seq_idx"`);
    await queryRunner.query(`DROP INDEX "domains"."outbox_published_at_idx"`);
    await queryRunner.query(`DROP TABLE "domains"."outbox"`);
  }
}
