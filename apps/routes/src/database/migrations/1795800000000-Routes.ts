import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Routes, with the domain their pattern names. */
export class Routes1795800000000 implements MigrationInterface {
  name = 'Routes1795800000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "routes"."routes" ("id" uuid NOT NULL, "seq" bigint GENERATED ALWAYS AS IDENTITY NOT NULL, "account_id" uuid NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "name" character varying(255) NOT NULL, "url" character varying(2048) NOT NULL, "recipient" character varying(255) NOT NULL, "domain_id" uuid, "domain_name" character varying(253), "enabled" boolean NOT NULL DEFAULT true, "attachments" boolean NOT NULL DEFAULT false, "headers" boolean NOT NULL DEFAULT false, "group_by_message_id" boolean NOT NULL DEFAULT false, "strip_replies" boolean NOT NULL DEFAULT false, "secret_ciphertext" text NOT NULL, "success_count" bigint NOT NULL DEFAULT '0', "error_count" bigint NOT NULL DEFAULT '0', "errors_since_last_success" integer NOT NULL DEFAULT '0', "last_request_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "routes_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE UNIQUE INDEX "routes_seq_key" ON "routes"."routes" ("seq") `);
    await queryRunner.query(
      `CREATE INDEX "routes_account_id_seq_idx" ON "routes"."routes" ("account_id", "seq") `,
    );
    await queryRunner.query(
      `CREATE INDEX "routes_account_id_domain_name_idx" ON "routes"."routes" ("account_id", "domain_name") `,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "routes"."routes"`);
  }
}
