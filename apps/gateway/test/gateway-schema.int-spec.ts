import { DataSource } from 'typeorm';

import { gatewayDataSourceOptions } from '../src/database/data-source-options';
import { runGatewayMigrations } from '../src/database/run-gateway-migrations';
import { migrateGatewaySchema } from './gateway-test-support';

describe('gateway schema', () => {
  let dataSource: DataSource | undefined;

  beforeAll(async () => {
    await migrateGatewaySchema();
    dataSource = new DataSource(gatewayDataSourceOptions(process.env['DATABASE_URL'] ?? ''));
    await dataSource.initialize();
  });

  afterAll(async () => {
    await dataSource?.destroy();
  });

  it('needs nothing more than its migrations to match the entities', async () => {
    const pending = await dataSource?.driver.createSchemaBuilder().log();
    expect(pending?.upQueries.map((query) => query.query)).toEqual([]);
  });

  it('keeps the records in a logged table, and no rate-limit table (limits live in memory)', async () => {
    const rows = (await dataSource?.query(
      `SELECT c.relname, c.relpersistence FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = 'gateway' AND c.relkind = 'r'
         AND c.relname IN ('rate_limit_buckets', 'idempotency_records')
       ORDER BY c.relname`,
    )) as Array<{ relname: string; relpersistence: string }>;
    expect(rows).toEqual([{ relname: 'idempotency_records', relpersistence: 'p' }]);
  });

  it('migrates again without applying anything', async () => {
    const url = process.env['DATABASE_URL'] ?? '';
    await expect(runGatewayMigrations(url)).resolves.toEqual([]);
  });
});
