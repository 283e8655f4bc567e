import { randomBytes } from 'node:crypto';

import { DataSource } from 'typeorm';

import {
  isUniqueViolation,
  preparedQuery,
  preparedStatementName,
  serviceDataSourceOptions,
} from '../src';

describe('preparedQuery (real PostgreSQL)', () => {
  const schema = `prepared_query_int_${randomBytes(4).toString('hex')}`;
  const insertSql = `INSERT INTO "${schema}"."items" (id, label) SELECT * FROM unnest($1::int[], $2::text[])`;
  const selectSql = `SELECT id, label FROM "${schema}"."items" WHERE id = ANY($1::int[]) ORDER BY id`;
  let dataSource: DataSource;

  beforeAll(async () => {
    dataSource = new DataSource(
      serviceDataSourceOptions({
        url: process.env['DATABASE_URL'] ?? '',
        schema,
        entities: [],
        migrations: [],
        // One connection: every statement below meets the statements prepared before it.
        poolSize: 1,
      }),
    );
    await dataSource.initialize();
    await dataSource.query(`CREATE SCHEMA "${schema}"`);
    await dataSource.query(
      `CREATE TABLE "${schema}"."items" (id int PRIMARY KEY, label text NOT NULL)`,
    );
  });

  afterAll(async () => {
    await dataSource.query(`DROP SCHEMA "${schema}" CASCADE`);
    await dataSource.destroy();
  });

  it('names a text by its digest: the same text the same name, another text another', () => {
    expect(preparedStatementName(selectSql)).toBe(preparedStatementName(selectSql));
    expect(preparedStatementName(selectSql)).not.toBe(preparedStatementName(insertSql));
  });

  it('runs the statement, prepared once on the connection and reused', async () => {
    await preparedQuery(dataSource.manager, insertSql, [
      [1, 2],
      ['one', 'two'],
    ]);
    await expect(preparedQuery(dataSource.manager, selectSql, [[1, 2]])).resolves.toEqual([
      { id: 1, label: 'one' },
      { id: 2, label: 'two' },
    ]);
    await expect(preparedQuery(dataSource.manager, selectSql, [[2]])).resolves.toEqual([
      { id: 2, label: 'two' },
    ]);
    const prepared = await dataSource.query<Array<{ name: string }>>(
      'SELECT name FROM pg_prepared_statements WHERE name = ANY($1::text[]) ORDER BY name',
      [[preparedStatementName(insertSql), preparedStatementName(selectSql)]],
    );
    expect(prepared.map(({ name }) => name).sort()).toEqual(
      [preparedStatementName(insertSql), preparedStatementName(selectSql)].sort(),
    );
  });

  it("runs in the manager's transaction: rolled back with it", async () => {
    const rollback = new Error('roll back');
    await expect(
      dataSource.transaction(async (manager) => {
        await preparedQuery(manager, insertSql, [[3], ['three']]);
        await expect(preparedQuery(manager, selectSql, [[3]])).resolves.toEqual([
          { id: 3, label: 'three' },
        ]);
        throw rollback;
      }),
    ).rejects.toBe(rollback);
    await expect(preparedQuery(dataSource.manager, selectSql, [[3]])).resolves.toEqual([]);
  });

  it("fails with PostgreSQL's error, which the error helpers read", async () => {
    const failure = await preparedQuery(dataSource.manager, insertSql, [[1], ['again']]).catch(
      (error: unknown) => error,
    );
    expect(isUniqueViolation(failure, 'items_pkey')).toBe(true);
  });
});
