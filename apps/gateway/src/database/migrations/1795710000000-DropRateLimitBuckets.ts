import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Rate limits are held in the gateway replicas' memory now, reconciled over NATS. */
export class DropRateLimitBuckets1795710000000 implements MigrationInterface {
  name = 'DropRateLimitBuckets1795710000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "gateway"."rate_limit_buckets"`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE UNLOGGED TABLE "gateway"."rate_limit_buckets" ("account_id" uuid NOT NULL, "limit_class" character varying(16) NOT NULL, "tat" TIMESTAMP WITH TIME ZONE NOT NULL, "allowed" boolean NOT NULL, CONSTRAINT "rate_limit_buckets_pkey" PRIMARY KEY ("account_id", "limit_class"))`,
    );
  }
}
