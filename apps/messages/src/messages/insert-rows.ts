import type { EntityManager } from 'typeorm';

/**
 * How one column's values travel in an unnest INSERT, where each column is one array parameter
 * that PostgreSQL expands into rows:
 * - a scalar type (`uuid`, `text`, …): the rows' values as a `type[]`;
 * - `text[]`: each row's array written as an array literal, and the literals sent as a `text[]`
 *   cast back row by row (unnest flattens a two-dimensional array, and the rows' arrays differ
 *   in length anyway);
 * - `jsonb` and `json`: each row's value as JSON text (null stays NULL); `json` keeps it as
 *   written (key order included);
 * - `bytea`: each row's value as its own binary parameter, gathered with `ARRAY[…]`, so contents
 *   are never hex-encoded.
 */
export type ColumnType =
  | 'uuid'
  | 'text'
  | 'boolean'
  | 'smallint'
  | 'integer'
  | 'timestamptz'
  | 'jsonb'
  | 'json'
  | 'text[]'
  | 'bytea';

/** A column of the statement: its type and how a row's value is read. */
export type ColumnSpec<Row> = readonly [type: ColumnType, value: (row: Row) => unknown];

/** The table's columns by SQL name, in the statement's order. */
export type Columns<Row> = Readonly<Record<string, ColumnSpec<Row>>>;

export interface InsertStatement {
  sql: string;
  parameters: unknown[];
}

/** A string as a quoted element of a PostgreSQL array literal: safe for any text. */
function quoteElement(value: string): string {
  return `"${value.replace(/[\\"]/g, '\\$&')}"`;
}

/**
 * A string array as a PostgreSQL array literal (`{"a","b"}`, `{}` when empty): every element
 * quoted, so commas, quotes, braces, backslashes, spaces and the text NULL stay as they are.
 */
export function textArrayLiteral(values: readonly (string | null)[]): string {
  return `{${values.map((value) => (value === null ? 'NULL' : quoteElement(value))).join(',')}}`;
}

function jsonText(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

function textArray(value: unknown): string | null {
  return value === null || value === undefined ? null : textArrayLiteral(value as string[]);
}

/** The values every row of a statement shares: each sent once, as a scalar parameter. */
export interface SharedValues<Shared> {
  columns: Columns<Shared>;
  values: Shared;
}

/**
 * `INSERT INTO table (…) SELECT … FROM unnest($1::t1[], $2::t2[], …)`: one parameter per column
 * (one per row for bytea), whatever the number of rows. Rows keep their order (identity columns
 * number them as given). The `shared` columns, the same in every row, are selected as one scalar
 * parameter each, so their values are neither repeated per row nor expanded by unnest.
 */
export function insertRowsStatement<Row, Shared = never>(
  table: string,
  columns: Columns<Row>,
  rows: readonly Row[],
  shared?: SharedValues<Shared>,
): InsertStatement {
  const parameters: unknown[] = [];
  const parameter = (value: unknown): string => {
    parameters.push(value);
    return `$${parameters.length}`;
  };
  const names: string[] = [];
  const arrays: string[] = [];
  const selected: string[] = [];
  for (const [name, [type, read]] of Object.entries(columns)) {
    const values = rows.map(read);
    const alias = `c${arrays.length}`;
    names.push(`"${name}"`);
    switch (type) {
      case 'bytea':
        arrays.push(
          `ARRAY[${values.map((value) => `${parameter(value)}::bytea`).join(', ')}]::bytea[]`,
        );
        selected.push(alias);
        break;
      case 'text[]':
        arrays.push(`${parameter(values.map(textArray))}::text[]`);
        selected.push(`${alias}::text[]`);
        break;
      case 'jsonb':
      case 'json':
        arrays.push(`${parameter(values.map(jsonText))}::${type}[]`);
        selected.push(alias);
        break;
      case 'uuid':
      case 'text':
      case 'boolean':
      case 'smallint':
      case 'integer':
      case 'timestamptz':
        arrays.push(`${parameter(values)}::${type}[]`);
        selected.push(alias);
        break;
    }
  }
  for (const [name, [type, read]] of Object.entries(shared?.columns ?? {})) {
    names.push(`"${name}"`);
    selected.push(`${parameter(scalarParameter(type, shared && read(shared.values)))}::${type}`);
  }
  const aliases = arrays.map((_, index) => `c${index}`);
  const sql =
    `INSERT INTO ${table} (${names.join(', ')}) ` +
    `SELECT ${selected.join(', ')} ` +
    `FROM unnest(${arrays.join(', ')}) WITH ORDINALITY AS r(${aliases.join(', ')}, n) ` +
    'ORDER BY n';
  return { sql, parameters };
}

/** A shared column's value as its one parameter (as a row's value would travel in its array). */
function scalarParameter(type: ColumnType, value: unknown): unknown {
  switch (type) {
    case 'text[]':
      return textArray(value);
    case 'jsonb':
    case 'json':
      return jsonText(value);
    case 'uuid':
    case 'text':
    case 'boolean':
    case 'smallint':
    case 'integer':
    case 'timestamptz':
    case 'bytea':
      return value ?? null;
  }
}

/**
 * The INSERTs as one statement (`WITH s0 AS (…), s1 AS (…) …last`), their parameters renumbered
 * after one another: one round trip, atomic without a transaction of its own. Each statement must
 * be an INSERT whose only `$n` are its parameters (as the builders here write them). Foreign keys
 * between the tables are checked at the end of the statement, so the order is free.
 */
export function combinedInsertStatement(
  statements: readonly InsertStatement[],
): InsertStatement | undefined {
  const parameters: unknown[] = [];
  const renumbered = statements.map((statement) => {
    const offset = parameters.length;
    parameters.push(...statement.parameters);
    return statement.sql.replace(/\$(\d+)/g, (_, index: string) => `$${Number(index) + offset}`);
  });
  const last = renumbered.pop();
  if (last === undefined) return undefined;
  const ctes = renumbered.map((sql, index) => `s${index} AS (${sql})`);
  return { sql: ctes.length === 0 ? last : `WITH ${ctes.join(', ')} ${last}`, parameters };
}

/** Inserts the rows into `table` with one unnest statement (nothing when there are none). */
export async function insertRows<Row>(
  manager: EntityManager,
  table: string,
  columns: Columns<Row>,
  rows: readonly Row[],
): Promise<void> {
  if (rows.length === 0) return;
  const { sql, parameters } = insertRowsStatement(table, columns, rows);
  await manager.query(sql, parameters);
}
