import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Routed messages copied from the MX's spool, and the calls to make to route URLs. */
export class RouteDeliveries1795800000002 implements MigrationInterface {
  name = 'RouteDeliveries1795800000002';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "routes"."inbound_messages" ("id" uuid NOT NULL, "account_id" uuid NOT NULL, "received_at" TIMESTAMP WITH TIME ZONE NOT NULL, "raw" bytea NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "inbound_messages_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "inbound_messages_created_at_idx" ON "routes"."inbound_messages" ("created_at") `,
    );
    await queryRunner.query(
      `CREATE TABLE "routes"."route_deliveries" ("id" uuid NOT NULL, "route_id" uuid NOT NULL, "inbound_id" uuid NOT NULL, "recipients" text array NOT NULL, "state" character varying(16) NOT NULL DEFAULT 'pending', "attempts" integer NOT NULL DEFAULT '0', "next_attempt_at" TIMESTAMP WITH TIME ZONE NOT NULL, "lease_until" TIMESTAMP WITH TIME ZONE, "last_status" integer, "last_error" text, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "route_deliveries_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "route_deliveries_due_idx" ON "routes"."route_deliveries" ("next_attempt_at") WHERE state = 'pending'`,
    );
    await queryRunner.query(
      `CREATE INDEX "route_deliveries_inbound_id_idx" ON "routes"."route_deliveries" ("inbound_id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "route_deliveries_route_id_idx" ON "routes"."route_deliveries" ("route_id") `,
    );
    await queryRunner.query(
      `ALTER TABLE "routes"."route_deliveries" ADD CONSTRAINT "route_deliveries_route_id_fkey" FOREIGN KEY ("route_id") REFERENCES "routes"."routes"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "routes"."route_deliveries" ADD CONSTRAINT "route_deliveries_inbound_id_fkey" FOREIGN KEY ("inbound_id") REFERENCES "routes"."inbound_messages"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "routes"."route_deliveries"`);
    await queryRunner.query(`DROP TABLE "routes"."inbound_messages"`);
  }
}
