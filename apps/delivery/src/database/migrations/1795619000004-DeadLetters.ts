import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The consumers' dead letters (DeadLetterEntity), for the operator to list and replay. */
export class DeadLetters1795619000004 implements MigrationInterface {
  name = 'DeadLetters1795619000004';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "delivery"."dead_letters" ("id" uuid NOT NULL, "durable" character varying(255) NOT NULL, "stream" character varying(64) NOT NULL, "subject" character varying(255) NOT NULL, "payload" bytea NOT NULL, "headers" jsonb NOT NULL, "error" text NOT NULL, "deliveries" integer NOT NULL, "failed_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "dead_letters_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "dead_letters_failed_at_idx" ON "delivery"."dead_letters" ("failed_at")`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "delivery"."dead_letters_failed_at_idx"`);
    await queryRunner.query(`DROP TABLE "delivery"."dead_letters"`);
  }
}
