import type { MigrationInterface, QueryRunner } from 'typeorm';

export class IdempotencyAndRateLimits1795420800000 implements MigrationInterface {
  name = 'IdempotencyAndRateLimits1795420800000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "gateway"."idempotency_records" ("account_id" uuid NOT NULL, "idempotency_key" character varying(255) NOT NULL, "method" character varying(16) NOT NULL, "path" text NOT NULL, "body_sha256" character(64) NOT NULL, "state" character varying(16) NOT NULL, "claim_token" uuid NOT NULL, "status_code" smallint, "content_type" text, "response_body" bytea, "encrypted" boolean NOT NULL DEFAULT false, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "idempotency_records_pkey" PRIMARY KEY ("account_id", "idempotency_key"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "idempotency_records_expires_at_idx" ON "gateway"."idempotency_records" ("expires_at") `,
    );
    // UNLOGGED by hand (TypeORM cannot express it): limits are cheap to lose, costly to journal.
    await queryRunner.query(
      `CREATE UNLOGGED TABLE "gateway"."rate_limit_buckets" ("account_id" uuid NOT NULL, "limit_class" character varying(16) NOT NULL, "tat" TIMESTAMP WITH TIME ZONE NOT NULL, "allowed" boolean NOT NULL, CONSTRAINT "rate_limit_buckets_pkey" PRIMARY KEY ("account_id", "limit_class"))`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "gateway"."rate_limit_buckets"`);
    await queryRunner.query(`DROP INDEX "gateway"."idempotency_records_expires_at_idx"`);
    await queryRunner.query(`DROP TABLE "gateway"."idempotency_records"`);
  }
}
