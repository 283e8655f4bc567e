import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * SMTP credentials (platform notes 2.10), the domains scoped ones are linked to, and the failed
 * SMTP logins counted per remote address and per username (reliability plan item 33).
 */
export class SmtpCredentials1795900000000 implements MigrationInterface {
  name = 'SmtpCredentials1795900000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "accounts"."smtp_credentials" (
        "id" uuid NOT NULL,
        "seq" bigint GENERATED ALWAYS AS IDENTITY NOT NULL,
        "account_id" uuid NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "name" character varying(255) NOT NULL,
        "username" character varying(64) NOT NULL,
        "sandbox" boolean NOT NULL,
        "scope" character varying(16) NOT NULL,
        "password_hash" character varying(200) NOT NULL,
        "password_ciphertext" text NOT NULL,
        CONSTRAINT "smtp_credentials_pkey" PRIMARY KEY ("id")
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "smtp_credentials_seq_key" ON "accounts"."smtp_credentials" ("seq")`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "smtp_credentials_username_key" ON "accounts"."smtp_credentials" ("username")`,
    );
    await queryRunner.query(
      `CREATE INDEX "smtp_credentials_account_id_seq_idx" ON "accounts"."smtp_credentials" ("account_id", "seq")`,
    );
    await queryRunner.query(
      `ALTER TABLE "accounts"."smtp_credentials" ADD CONSTRAINT "smtp_credentials_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"."accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(`
      CREATE TABLE "accounts"."smtp_credential_domains" (
        "credential_id" uuid NOT NULL,
        "domain" character varying(253) NOT NULL,
        "domain_id" uuid NOT NULL,
        "position" smallint NOT NULL,
        CONSTRAINT "smtp_credential_domains_pkey" PRIMARY KEY ("credential_id", "domain")
      )`);
    await queryRunner.query(
      `CREATE INDEX "smtp_credential_domains_domain_id_idx" ON "accounts"."smtp_credential_domains" ("domain_id")`,
    );
    await queryRunner.query(
      `ALTER TABLE "accounts"."smtp_credential_domains" ADD CONSTRAINT "smtp_credential_domains_credential_id_fkey" FOREIGN KEY ("credential_id") REFERENCES "accounts"."smtp_credentials"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(`
      CREATE TABLE "accounts"."smtp_login_failures" (
        "subject" character varying(300) NOT NULL,
        "window_started_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "failures" integer NOT NULL,
        "blocked_until" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "smtp_login_failures_pkey" PRIMARY KEY ("subject")
      )`);
    await queryRunner.query(
      `CREATE INDEX "smtp_login_failures_window_started_at_idx" ON "accounts"."smtp_login_failures" ("window_started_at")`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "accounts"."smtp_login_failures"`);
    await queryRunner.query(`DROP TABLE "accounts"."smtp_credential_domains"`);
    await queryRunner.query(`DROP TABLE "accounts"."smtp_credentials"`);
  }
}
