import { DataSource, type DataSourceOptions, MigrationExecutor } from 'typeorm';

/**
 * Runs a service's pending migrations in one transaction on one connection: an advisory lock
 * serialises concurrent runners (test workers, replicas), the schema is created if missing, then
 * every pending migration runs; any failure rolls all of it back.
 */
export async function runMigrations(
  options: DataSourceOptions & { schema?: string },
): Promise<string[]> {
  const schema = options.schema;
  if (!schema) throw new Error('runMigrations needs a schema');
  const dataSource = new DataSource(options);
  await dataSource.initialize();
  const queryRunner = dataSource.createQueryRunner();
  try {
    await queryRunner.connect();
    await queryRunner.startTransaction();
    await queryRunner.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`migrations:${schema}`]);
    await queryRunner.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    const executor = new MigrationExecutor(dataSource, queryRunner);
    executor.transaction = 'none';
    const applied = await executor.executePendingMigrations();
    await queryRunner.commitTransaction();
    return applied.map((migration) => migration.name);
  } catch (error) {
    if (queryRunner.isTransactionActive) await queryRunner.rollbackTransaction();
    throw error;
  } finally {
    await queryRunner.release();
    await dataSource.destroy();
  }
}
