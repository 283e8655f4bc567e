import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Sends committed under an Idempotency-Key, with their reply, for retries to find. */
export class AcceptedRequests1795623768182 implements MigrationInterface {
  name = 'AcceptedRequests1795623768182';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "messages"."accepted_requests" ("account_id" uuid NOT NULL, "idempotency_key" character varying(255) NOT NULL, "request_fingerprint" character(64) NOT NULL, "reply" json NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "accepted_requests_pkey" PRIMARY KEY ("account_id", "idempotency_key"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "accepted_requests_created_at_idx" ON "messages"."accepted_requests" ("created_at") `,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "messages"."accepted_requests_created_at_idx"`);
    await queryRunner.query(`DROP TABLE "messages"."accepted_requests"`);
  }
}
