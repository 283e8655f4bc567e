import type { MigrationInterface, QueryRunner } from 'typeorm';

export class DomainScopes1795339232448 implements MigrationInterface {
  name = 'DomainScopes1795339232448';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "accounts"."deleted_domains" ("domain_id" uuid NOT NULL, "account_id" uuid NOT NULL, "domain" character varying(253) NOT NULL, "deleted_at" TIMESTAMP WITH TIME ZONE NOT NULL, "recorded_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "deleted_domains_pkey" PRIMARY KEY ("domain_id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "deleted_domains_recorded_at_idx" ON "accounts"."deleted_domains"  ("recorded_at") `,
    );
    await queryRunner.query(
      `CREATE INDEX "api_key_scopes_unresolved_domain_idx" ON "accounts"."api_key_scopes"  ("domain") WHERE domain_id IS NULL AND domain IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX "api_key_scopes_domain_id_idx" ON "accounts"."api_key_scopes"  ("domain_id") WHERE domain_id IS NOT NULL`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "accounts"."api_key_scopes_domain_id_idx"`);
    await queryRunner.query(`DROP INDEX "accounts"."api_key_scopes_unresolved_domain_idx"`);
    await queryRunner.query(`DROP INDEX "accounts"."deleted_domains_recorded_at_idx"`);
    await queryRunner.query(`DROP TABLE "accounts"."deleted_domains"`);
  }
}
