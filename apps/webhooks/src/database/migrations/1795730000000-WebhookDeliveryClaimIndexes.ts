import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What lets a claim read only what it takes: each webhook's pending deliveries in due order, and
 * its leased ones (the calls in flight), instead of every due delivery.
 */
export class WebhookDeliveryClaimIndexes1795730000000 implements MigrationInterface {
  name = 'WebhookDeliveryClaimIndexes1795730000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX "webhook_deliveries_pending_idx" ON "webhooks"."webhook_deliveries" ("webhook_id", "next_attempt_at", "seq") WHERE "state" = 'pending'`,
    );
    await queryRunner.query(
      `CREATE INDEX "webhook_deliveries_leased_idx" ON "webhooks"."webhook_deliveries" ("webhook_id", "lease_until") WHERE "state" = 'pending' AND "lease_until" IS NOT NULL`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "webhooks"."webhook_deliveries_leased_idx"`);
    await queryRunner.query(`DROP INDEX "webhooks"."webhook_deliveries_pending_idx"`);
  }
}
