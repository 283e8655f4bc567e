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
  /**
   * Every parameter is an array holding one value per row, in row order (an unnest INSERT
   * without shared or bytea parameters): statements of the same text run together are merged
   * into one, their rows in the order of the statements.
   */
  rowArrays?: boolean;
}

/** An unnest INSERT whose parameters are all row arrays (see InsertStatement.rowArrays). */
export function rowArraysStatement(statement: InsertStatement): InsertStatement {
  return { ...statement, rowArrays: true };
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

/** Texts remembered per shape (the shapes of hot statements are few); then forgotten. */
const REMEMBERED_TEXTS_MAX = 1_000;

/** Statement texts by columns, then by shared columns ({@link NO_SHARED} when none), then key. */
const insertTexts = new WeakMap<object, WeakMap<object, Map<string, string>>>();
const NO_SHARED = {};

/**
 * `INSERT INTO table (…) SELECT … FROM unnest($1::t1[], $2::t2[], …)`: one parameter per column
 * (one per row for bytea), whatever the number of rows. Rows keep their order (identity columns
 * number them as given). The `shared` columns, the same in every row, are selected as one scalar
 * parameter each, so their values are neither repeated per row nor expanded by unnest. The text
 * depends only on the table, the columns and (with a bytea column) the number of rows: it is
 * written once per shape.
 */
export function insertRowsStatement<Row, Shared = never>(
  table: string,
  columns: Columns<Row>,
  rows: readonly Row[],
  shared?: SharedValues<Shared>,
): InsertStatement {
  const parameters: unknown[] = [];
  for (const [type, read] of Object.values(columns)) {
    const values = rows.map(read);
    if (type === 'bytea') parameters.push(...values);
    else parameters.push(values.map((value) => scalarParameter(type, value)));
  }
  if (shared) {
    for (const [type, read] of Object.values(shared.columns)) {
      parameters.push(scalarParameter(type, read(shared.values)));
    }
  }
  return { sql: insertText(table, columns, rows.length, shared?.columns), parameters };
}

/** The text of {@link insertRowsStatement} for its shape, remembered. */
function insertText<Row, Shared>(
  table: string,
  columns: Columns<Row>,
  rowCount: number,
  sharedColumns: Columns<Shared> | undefined,
): string {
  const hasBytea = Object.values(columns).some(([type]) => type === 'bytea');
  const key = hasBytea ? `${table}\u0000${rowCount}` : table;
  let bySharedColumns = insertTexts.get(columns);
  if (!bySharedColumns) {
    bySharedColumns = new WeakMap();
    insertTexts.set(columns, bySharedColumns);
  }
  let texts = bySharedColumns.get(sharedColumns ?? NO_SHARED);
  if (!texts) {
    texts = new Map();
    bySharedColumns.set(sharedColumns ?? NO_SHARED, texts);
  }
  let text = texts.get(key);
  if (text === undefined) {
    text = writeInsertText(table, columns, rowCount, sharedColumns);
    if (texts.size >= REMEMBERED_TEXTS_MAX) texts.clear();
    texts.set(key, text);
  }
  return text;
}

function writeInsertText<Row, Shared>(
  table: string,
  columns: Columns<Row>,
  rowCount: number,
  sharedColumns: Columns<Shared> | undefined,
): string {
  let parameterCount = 0;
  const parameter = (): string => `$${++parameterCount}`;
  const names: string[] = [];
  const arrays: string[] = [];
  const selected: string[] = [];
  for (const [name, [type]] of Object.entries(columns)) {
    const alias = `c${arrays.length}`;
    names.push(`"${name}"`);
    if (type === 'bytea') {
      const rowParameters = Array.from({ length: rowCount }, () => `${parameter()}::bytea`);
      arrays.push(`ARRAY[${rowParameters.join(', ')}]::bytea[]`);
      selected.push(alias);
    } else if (type === 'text[]') {
      arrays.push(`${parameter()}::text[]`);
      selected.push(`${alias}::text[]`);
    } else {
      arrays.push(`${parameter()}::${type}[]`);
      selected.push(alias);
    }
  }
  for (const [name, [type]] of Object.entries(sharedColumns ?? {})) {
    names.push(`"${name}"`);
    selected.push(`${parameter()}::${type}`);
  }
  const aliases = arrays.map((_, index) => `c${index}`);
  return (
    `INSERT INTO ${table} (${names.join(', ')}) ` +
    `SELECT ${selected.join(', ')} ` +
    `FROM unnest(${arrays.join(', ')}) WITH ORDINALITY AS r(${aliases.join(', ')}, n) ` +
    'ORDER BY n'
  );
}

/** A shared column's value as its one parameter, and a row's value as it travels in its array. */
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

/** Combined texts by their statements' shapes (a few per table set). */
const combinedTexts = new Map<string, string>();

/**
 * A number per statement text, never reused: a text the builders return is one string kept in
 * their caches, whose hash V8 keeps, so a look-up costs nothing like hashing the text again.
 */
const textNumbers = new Map<string, number>();
let nextTextNumber = 0;

function textNumber(sql: string): number {
  let number = textNumbers.get(sql);
  if (number === undefined) {
    if (textNumbers.size >= REMEMBERED_TEXTS_MAX) textNumbers.clear();
    number = nextTextNumber++;
    textNumbers.set(sql, number);
  }
  return number;
}

/**
 * The shape of statements run together: their texts and parameter counts, in order, as a short
 * key (two statement lists have the same shape only if they have the same texts and counts).
 */
export function statementsShape(statements: readonly InsertStatement[]): string {
  return statements
    .map((statement) => `${textNumber(statement.sql)}:${statement.parameters.length}`)
    .join(' ');
}

/**
 * The INSERTs as one statement (`WITH s0 AS (…), s1 AS (…) …last`), their parameters renumbered
 * after one another: one round trip, atomic without a transaction of its own. Each statement must
 * be an INSERT whose only `$n` are its parameters (as the builders here write them). Foreign keys
 * between the tables are checked at the end of the statement, so the order is free. The combined
 * text is written once per combination of texts.
 */
export function combinedInsertStatement(
  given: readonly InsertStatement[],
): InsertStatement | undefined {
  if (given.length === 0) return undefined;
  const statements = mergedRowArrays(given);
  const parameters = statements.flatMap((statement) => statement.parameters);
  const key = statementsShape(statements);
  let sql = combinedTexts.get(key);
  if (sql === undefined) {
    sql = writeCombinedText(statements);
    if (combinedTexts.size >= REMEMBERED_TEXTS_MAX) combinedTexts.clear();
    combinedTexts.set(key, sql);
  }
  return { sql, parameters };
}

/**
 * The statements with those of one text whose parameters are row arrays merged into one, at the
 * first one's place: its rows, then the next one's, and so on.
 */
function mergedRowArrays(statements: readonly InsertStatement[]): readonly InsertStatement[] {
  if (statements.filter((statement) => statement.rowArrays).length < 2) return statements;
  const merged: InsertStatement[] = [];
  const byText = new Map<string, InsertStatement>();
  for (const statement of statements) {
    const first = statement.rowArrays ? byText.get(statement.sql) : undefined;
    if (first) {
      first.parameters = first.parameters.map((rows, index) =>
        concatRows(rows, statement.parameters[index]),
      );
    } else {
      const own = { ...statement, parameters: [...statement.parameters] };
      if (statement.rowArrays) byText.set(statement.sql, own);
      merged.push(own);
    }
  }
  return merged;
}

function concatRows(first: unknown, next: unknown): unknown[] {
  if (!Array.isArray(first) || !Array.isArray(next)) {
    throw new Error('a statement of row arrays has a parameter that is not an array');
  }
  return [...(first as unknown[]), ...(next as unknown[])];
}

function writeCombinedText(statements: readonly InsertStatement[]): string {
  let offset = 0;
  const renumbered = statements.map((statement) => {
    const shift = offset;
    offset += statement.parameters.length;
    return statement.sql.replace(/\$(\d+)/g, (_, index: string) => `$${Number(index) + shift}`);
  });
  const last = renumbered.pop() ?? '';
  const ctes = renumbered.map((sql, index) => `s${index} AS (${sql})`);
  return ctes.length === 0 ? last : `WITH ${ctes.join(', ')} ${last}`;
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
