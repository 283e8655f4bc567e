import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Stream subjects carry a version (`events.domain.deleted.v1`, `delivery.jobs.v1`): the outbox
 * rows not published yet move to the versioned subject, so none is published under a subject no
 * consumer filters any more. Every subject before this one was unversioned and became `.v1`.
 */
export class VersionedStreamSubjects1795621000002 implements MigrationInterface {
  name = 'VersionedStreamSubjects1795621000002';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `UPDATE "suppressions"."outbox" SET "subject" = "subject" || '.v1' WHERE "published_at" IS NULL AND "subject" !~ '\\.v[0-9]+$'`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `UPDATE "suppressions"."outbox" SET "subject" = left("subject", -3) WHERE "published_at" IS NULL AND "subject" ~ '\\.v1$'`,
    );
  }
}
