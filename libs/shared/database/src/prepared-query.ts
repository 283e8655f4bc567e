import { createHash } from 'node:crypto';

import type { PoolClient, QueryResultRow } from 'pg';
import type { EntityManager } from 'typeorm';

/** Statement texts whose names are remembered (hot statements take few shapes); then forgotten. */
const REMEMBERED_NAMES_MAX = 1_000;
const remembered = new Map<string, string>();

/**
 * The name of a statement's server-side prepared statement: derived from its text, so one name
 * always means one text (node-postgres refuses a name reused for another text). Remembered by
 * text: no digest per call.
 */
export function preparedStatementName(sql: string): string {
  let name = remembered.get(sql);
  if (name === undefined) {
    name = `envoi_${createHash('sha1').update(sql).digest('hex').slice(0, 24)}`;
    if (remembered.size >= REMEMBERED_NAMES_MAX) remembered.clear();
    remembered.set(sql, name);
  }
  return name;
}

/**
 * Runs a hot statement of fixed shape as a named prepared statement on the manager's connection
 * (its transaction's when it has one): PostgreSQL parses and plans it once per connection instead
 * of on every call. Only for statements whose text takes a bounded number of shapes (the text is
 * the key, and each connection keeps every shape it has run). Errors are node-postgres's own
 * (`code`, `constraint`, …), not wrapped in TypeORM's QueryFailedError.
 */
export async function preparedQuery<Row extends QueryResultRow>(
  manager: EntityManager,
  sql: string,
  parameters: readonly unknown[],
): Promise<Row[]> {
  const runner = manager.queryRunner ?? manager.connection.createQueryRunner();
  try {
    const client = (await runner.connect()) as PoolClient;
    const result = await client.query<Row>({
      name: preparedStatementName(sql),
      text: sql,
      values: [...parameters],
    });
    return result.rows;
  } finally {
    if (runner !== manager.queryRunner) await runner.release();
  }
}
