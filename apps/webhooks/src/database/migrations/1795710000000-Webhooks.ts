import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Webhooks and the domains scoped ones are linked to. */
export class Webhooks1795710000000 implements MigrationInterface {
  name = 'Webhooks1795710000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "webhooks"."webhooks" ("id" uuid NOT NULL, "seq" bigint GENERATED ALWAYS AS IDENTITY NOT NULL, "account_id" uuid NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "name" character varying(255) NOT NULL, "url" character varying(2048) NOT NULL, "enabled" boolean NOT NULL DEFAULT true, "disabled_reason" character varying(255), "scope" character varying(16) NOT NULL, "secret_ciphertext" text NOT NULL, "on_reception" boolean NOT NULL DEFAULT false, "on_delivered" boolean NOT NULL DEFAULT false, "on_transient_error" boolean NOT NULL DEFAULT false, "on_failed" boolean NOT NULL DEFAULT false, "on_bounced" boolean NOT NULL DEFAULT false, "on_suppressed" boolean NOT NULL DEFAULT false, "on_opened" boolean NOT NULL DEFAULT false, "on_clicked" boolean NOT NULL DEFAULT false, "on_suppression_created" boolean NOT NULL DEFAULT false, "on_dns_error" boolean NOT NULL DEFAULT false, "success_count" bigint NOT NULL DEFAULT '0', "error_count" bigint NOT NULL DEFAULT '0', "errors_since_last_success" integer NOT NULL DEFAULT '0', "last_request_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "webhooks_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "webhooks_seq_key" ON "webhooks"."webhooks" ("seq") `,
    );
    await queryRunner.query(
      `CREATE INDEX "webhooks_account_id_seq_idx" ON "webhooks"."webhooks" ("account_id", "seq") `,
    );
    await queryRunner.query(
      `CREATE TABLE "webhooks"."webhook_domains" ("webhook_id" uuid NOT NULL, "domain" character varying(253) NOT NULL, "account_id" uuid NOT NULL, CONSTRAINT "webhook_domains_pkey" PRIMARY KEY ("webhook_id", "domain"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "webhook_domains_account_id_domain_idx" ON "webhooks"."webhook_domains" ("account_id", "domain") `,
    );
    await queryRunner.query(
      `ALTER TABLE "webhooks"."webhook_domains" ADD CONSTRAINT "webhook_domains_webhook_id_fkey" FOREIGN KEY ("webhook_id") REFERENCES "webhooks"."webhooks"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "webhooks"."webhook_domains"`);
    await queryRunner.query(`DROP TABLE "webhooks"."webhooks"`);
  }
}
