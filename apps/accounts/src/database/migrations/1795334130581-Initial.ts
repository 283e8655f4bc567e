import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Initial1795334130581 implements MigrationInterface {
  name = 'Initial1795334130581';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "accounts"."users" ("id" uuid NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "email" character varying(254), "name" character varying(255) NOT NULL DEFAULT '', CONSTRAINT "users_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "users_email_key" ON "accounts"."users"  ("email") `,
    );
    await queryRunner.query(
      `CREATE TABLE "accounts"."accounts" ("id" uuid NOT NULL, "seq" bigint GENERATED ALWAYS AS IDENTITY NOT NULL, "parent_account_id" uuid, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "name" character varying(255) NOT NULL, "website" character varying(2048) NOT NULL DEFAULT '', "about" text NOT NULL DEFAULT '', "track_opens" boolean NOT NULL DEFAULT false, "track_clicks" boolean NOT NULL DEFAULT false, "reject_bad_recipients" boolean NOT NULL DEFAULT false, "reject_mistyped_recipients" boolean NOT NULL DEFAULT false, "message_metadata_retention" smallint NOT NULL DEFAULT '30', "message_data_retention" smallint NOT NULL DEFAULT '7', "owner_id" uuid NOT NULL, CONSTRAINT "accounts_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "accounts_seq_key" ON "accounts"."accounts"  ("seq") `,
    );
    await queryRunner.query(
      `CREATE INDEX "accounts_parent_account_id_idx" ON "accounts"."accounts"  ("parent_account_id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "accounts_owner_id_idx" ON "accounts"."accounts"  ("owner_id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "accounts"."api_keys" ("id" uuid NOT NULL, "seq" bigint GENERATED ALWAYS AS IDENTITY NOT NULL, "account_id" uuid NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "last_used_at" TIMESTAMP WITH TIME ZONE, "label" character varying(255) NOT NULL, "public_key" character varying(64) NOT NULL, "secret_hash" character(64) NOT NULL, "ip_allow_list" text array NOT NULL DEFAULT '{}', CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "api_keys_seq_key" ON "accounts"."api_keys"  ("seq") `,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "api_keys_secret_hash_key" ON "accounts"."api_keys"  ("secret_hash") `,
    );
    await queryRunner.query(
      `CREATE INDEX "api_keys_account_id_seq_idx" ON "accounts"."api_keys"  ("account_id", "seq") `,
    );
    await queryRunner.query(
      `CREATE TABLE "accounts"."api_key_scopes" ("id" uuid NOT NULL, "api_key_id" uuid NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "scope" character varying(300) NOT NULL, "position" smallint NOT NULL, "domain" character varying(253), "domain_id" uuid, CONSTRAINT "api_key_scopes_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "api_key_scopes_api_key_id_scope_key" ON "accounts"."api_key_scopes"  ("api_key_id", "scope") `,
    );
    await queryRunner.query(
      `CREATE TABLE "accounts"."members" ("account_id" uuid NOT NULL, "user_id" uuid NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "role" character varying(32) NOT NULL, CONSTRAINT "members_pkey" PRIMARY KEY ("account_id", "user_id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "members_user_id_idx" ON "accounts"."members"  ("user_id") `,
    );
    await queryRunner.query(
      `ALTER TABLE "accounts"."accounts" ADD CONSTRAINT "accounts_parent_account_id_fkey" FOREIGN KEY ("parent_account_id") REFERENCES "accounts"."accounts"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "accounts"."accounts" ADD CONSTRAINT "accounts_owner_id_fkey" FOREIGN KEY ("owner_id") REFERENCES "accounts"."users"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "accounts"."api_keys" ADD CONSTRAINT "api_keys_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"."accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "accounts"."api_key_scopes" ADD CONSTRAINT "api_key_scopes_api_key_id_fkey" FOREIGN KEY ("api_key_id") REFERENCES "accounts"."api_keys"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "accounts"."members" ADD CONSTRAINT "members_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"."accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "accounts"."members" ADD CONSTRAINT "members_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "accounts"."users"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "accounts"."members" DROP CONSTRAINT "members_user_id_fkey"`,
    );
    await queryRunner.query(
      `ALTER TABLE "accounts"."members" DROP CONSTRAINT "members_account_id_fkey"`,
    );
    await queryRunner.query(
      `ALTER TABLE "accounts"."api_key_scopes" DROP CONSTRAINT "api_key_scopes_api_key_id_fkey"`,
    );
    await queryRunner.query(
      `ALTER TABLE "accounts"."api_keys" DROP CONSTRAINT "api_keys_account_id_fkey"`,
    );
    await queryRunner.query(
      `ALTER TABLE "accounts"."accounts" DROP CONSTRAINT "accounts_owner_id_fkey"`,
    );
    await queryRunner.query(
      `ALTER TABLE "accounts"."accounts" DROP CONSTRAINT "accounts_parent_account_id_fkey"`,
    );
    await queryRunner.query(`DROP INDEX "accounts"."members_user_id_idx"`);
    await queryRunner.query(`DROP TABLE "accounts"."members"`);
    await queryRunner.query(`DROP INDEX "accounts"."api_key_scopes_api_key_id_scope_key"`);
    await queryRunner.query(`DROP TABLE "accounts"."api_key_scopes"`);
    await queryRunner.query(`DROP INDEX "accounts"."api_keys_account_id_seq_idx"`);
    await queryRunner.query(`DROP INDEX "accounts"."api_keys_secret_hash_key"`);
    await queryRunner.query(`DROP INDEX "accounts"."api_keys_seq_key"`);
    await queryRunner.query(`DROP TABLE "accounts"."api_keys"`);
    await queryRunner.query(`DROP INDEX "accounts"."accounts_owner_id_idx"`);
    await queryRunner.query(`DROP INDEX "accounts"."accounts_parent_account_id_idx"`);
    await queryRunner.query(`DROP INDEX "accounts"."accounts_seq_key"`);
    await queryRunner.query(`DROP TABLE "accounts"."accounts"`);
    await queryRunner.query(`DROP INDEX "accounts"."users_email_key"`);
    await queryRunner.query(`DROP TABLE "accounts"."users"`);
  }
}
