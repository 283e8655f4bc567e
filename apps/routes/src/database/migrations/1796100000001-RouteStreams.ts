import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Route streams (platform notes 1.12): temporary routes, the listener, the buffered events. */
export class RouteStreams1796100000001 implements MigrationInterface {
  name = 'RouteStreams1796100000001';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "routes"."routes" ADD "temporary" boolean NOT NULL DEFAULT false, ADD "streamed" boolean NOT NULL DEFAULT false, ADD "stream_session_id" uuid, ADD "stream_lease_until" TIMESTAMP WITH TIME ZONE, ADD "stream_used_at" TIMESTAMP WITH TIME ZONE`,
    );
    await queryRunner.query(
      `CREATE TABLE "routes"."route_stream_events" ("seq" bigint GENERATED ALWAYS AS IDENTITY NOT NULL, "route_id" uuid NOT NULL, "event_id" character varying(255) NOT NULL, "event_type" character varying(64) NOT NULL, "body" text NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "route_stream_events_pkey" PRIMARY KEY ("seq"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "route_stream_events_route_id_event_id_key" ON "routes"."route_stream_events" ("route_id", "event_id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "route_stream_events_route_id_seq_idx" ON "routes"."route_stream_events" ("route_id", "seq") `,
    );
    await queryRunner.query(
      `CREATE INDEX "route_stream_events_created_at_idx" ON "routes"."route_stream_events" ("created_at") `,
    );
    await queryRunner.query(
      `ALTER TABLE "routes"."route_stream_events" ADD CONSTRAINT "route_stream_events_route_id_fkey" FOREIGN KEY ("route_id") REFERENCES "routes"."routes"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "routes"."route_stream_events"`);
    await queryRunner.query(
      `ALTER TABLE "routes"."routes" DROP COLUMN "stream_used_at", DROP COLUMN "stream_lease_until", DROP COLUMN "stream_session_id", DROP COLUMN "streamed", DROP COLUMN "temporary"`,
    );
  }
}
