import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Which accounts have a domain name: asked at every RCPT of inbound mail. */
export class DomainNameIndex1795800000001 implements MigrationInterface {
  name = 'DomainNameIndex1795800000001';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX "domains_name_idx" ON "domains"."domains" ("name") `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "domains"."domains_name_idx"`);
  }
}
