import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each planned call keeps its message.routing body, built once when the mail is taken: calls and
 * retries send it as it is. Calls planned before have none and build theirs from the bytes.
 */
export class RouteDeliveryPayloads1796300000001 implements MigrationInterface {
  name = 'RouteDeliveryPayloads1796300000001';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "routes"."route_deliveries" ADD "payload" text`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "routes"."route_deliveries" DROP COLUMN "payload"`);
  }
}
