import {
  type Columns,
  combinedInsertStatement,
  insertRowsStatement,
  rowArraysStatement,
  statementsShape,
  textArrayLiteral,
} from './insert-rows';

interface Row {
  id: string;
  tags: string[] | null;
  data: Buffer | null;
  meta: unknown;
  at: Date | null;
}

const COLUMNS: Columns<Row> = {
  id: ['uuid', (row) => row.id],
  tags: ['text[]', (row) => row.tags],
  data: ['bytea', (row) => row.data],
  meta: ['jsonb', (row) => row.meta],
  at: ['timestamptz', (row) => row.at],
};

describe('textArrayLiteral', () => {
  it('writes an empty array as {}', () => {
    expect(textArrayLiteral([])).toBe('{}');
  });

  it('quotes every element, escaping only backslashes and double quotes', () => {
    expect(textArrayLiteral(['a,b', 'say "hi"', '{x}', 'back\\slash', 'NULL', ' ', ''])).toBe(
      '{"a,b","say \\"hi\\"","{x}","back\\\\slash","NULL"," ",""}',
    );
    expect(textArrayLiteral(['\\"', '}{,"\\'])).toBe('{"\\\\\\"","}{,\\"\\\\"}');
  });

  it('writes a null element as an unquoted NULL', () => {
    expect(textArrayLiteral(['null', null])).toBe('{"null",NULL}');
  });
});

describe('insertRowsStatement', () => {
  const at = new Date('2030-01-02T03:04:05.678Z');
  const rows: Row[] = [
    { id: 'a', tags: ['x,y'], data: Buffer.from([0, 1]), meta: [{ n: 1 }], at },
    { id: 'b', tags: [], data: null, meta: null, at: null },
    { id: 'c', tags: null, data: Buffer.alloc(0), meta: 'text', at },
  ];

  it('sends one array per column (one parameter per row for bytea), rows in order', () => {
    const { sql, parameters } = insertRowsStatement('s.t', COLUMNS, rows);

    expect(sql).toBe(
      'INSERT INTO s.t ("id", "tags", "data", "meta", "at") ' +
        'SELECT c0, c1::text[], c2, c3, c4 ' +
        'FROM unnest($1::uuid[], $2::text[], ARRAY[$3::bytea, $4::bytea, $5::bytea]::bytea[], ' +
        '$6::jsonb[], $7::timestamptz[]) WITH ORDINALITY AS r(c0, c1, c2, c3, c4, n) ORDER BY n',
    );
    expect(parameters).toEqual([
      ['a', 'b', 'c'],
      ['{"x,y"}', '{}', null],
      Buffer.from([0, 1]),
      null,
      Buffer.alloc(0),
      ['[{"n":1}]', null, '"text"'],
      [at, null, at],
    ]);
  });

  it('sends as many parameters for 500 rows as for one, bytea aside', () => {
    const row = (id: string): Row => ({ id, tags: ['t'], data: null, meta: {}, at });
    const ids: Columns<Row> = { id: ['uuid', (r) => r.id], tags: ['text[]', (r) => r.tags] };
    const one = insertRowsStatement('t', ids, [row('0')]);
    const many = insertRowsStatement(
      't',
      ids,
      Array.from({ length: 500 }, (_, index) => row(`${index}`)),
    );

    expect(many.sql).toBe(one.sql);
    expect(many.parameters).toHaveLength(2);
    expect(many.parameters[0]).toHaveLength(500);
  });

  it('selects each shared column as one scalar parameter, written as its rows would be', () => {
    const ids: Columns<Row> = { id: ['uuid', (r) => r.id] };
    const { sql, parameters } = insertRowsStatement(
      's.t',
      ids,
      rows.map(({ id }) => ({ id })) as Row[],
      {
        columns: {
          tags: ['text[]', (shared: Row) => shared.tags],
          meta: ['jsonb', (shared: Row) => shared.meta],
          at: ['timestamptz', (shared: Row) => shared.at],
          data: ['bytea', (shared: Row) => shared.data],
        },
        values: { id: 'ignored', tags: ['a"b'], meta: { n: 1 }, at: null, data: Buffer.from([7]) },
      },
    );

    expect(sql).toBe(
      'INSERT INTO s.t ("id", "tags", "meta", "at", "data") ' +
        'SELECT c0, $2::text[], $3::jsonb, $4::timestamptz, $5::bytea ' +
        'FROM unnest($1::uuid[]) WITH ORDINALITY AS r(c0, n) ORDER BY n',
    );
    expect(parameters).toEqual([['a', 'b', 'c'], '{"a\\"b"}', '{"n":1}', null, Buffer.from([7])]);
  });

  it('writes the text once per shape: the same for the same columns and row count', () => {
    const first = insertRowsStatement('s.t', COLUMNS, rows);
    const again = insertRowsStatement('s.t', COLUMNS, [...rows].reverse());

    expect(again.sql).toBe(first.sql);
    expect(again.parameters[0]).toEqual(['c', 'b', 'a']);
    expect(insertRowsStatement('s.t', COLUMNS, rows.slice(1)).sql).toContain(
      'ARRAY[$3::bytea, $4::bytea]::bytea[]',
    );
    expect(insertRowsStatement('s.other', COLUMNS, rows).sql).toContain('INSERT INTO s.other ');
    const idsOnly: Columns<Row> = { id: ['uuid', (r) => r.id] };
    const shared = { columns: { at: ['timestamptz', (r: Row) => r.at] as const }, values: rows[0] };
    expect(insertRowsStatement('s.t', idsOnly, rows, shared).sql).toContain('$2::timestamptz');
    expect(insertRowsStatement('s.t', idsOnly, rows).sql).not.toContain('timestamptz');
  });

  it('writes no rows as empty arrays', () => {
    const { sql, parameters } = insertRowsStatement('t', COLUMNS, []);

    expect(sql).toContain('unnest($1::uuid[], $2::text[], ARRAY[]::bytea[], $3::jsonb[]');
    expect(parameters).toEqual([[], [], [], []]);
  });
});

describe('combinedInsertStatement', () => {
  it('is nothing without statements and the statement itself alone', () => {
    expect(combinedInsertStatement([])).toBeUndefined();
    const only = {
      sql: 'INSERT INTO t (a) SELECT a FROM unnest($1::text[]) AS r(a)',
      parameters: [['x']],
    };
    expect(combinedInsertStatement([only])).toEqual(only);
  });

  it('runs the earlier INSERTs as CTEs before the last, their parameters renumbered in order', () => {
    const combined = combinedInsertStatement([
      { sql: 'INSERT INTO a (x, y) SELECT $1, $2', parameters: [1, 2] },
      { sql: 'INSERT INTO b (x) SELECT $1', parameters: [3] },
      { sql: 'INSERT INTO c (x, y) SELECT $2, $1', parameters: [4, 5] },
    ]);
    expect(combined).toEqual({
      sql:
        'WITH s0 AS (INSERT INTO a (x, y) SELECT $1, $2), s1 AS (INSERT INTO b (x) SELECT $3) ' +
        'INSERT INTO c (x, y) SELECT $5, $4',
      parameters: [1, 2, 3, 4, 5],
    });
  });

  it('merges the statements of row arrays with one text into the first, rows in order', () => {
    const outbox = 'INSERT INTO o (id, p) SELECT * FROM unnest($1::uuid[], $2::jsonb[])';
    const rows = (ids: string[]) =>
      rowArraysStatement({ sql: outbox, parameters: [ids, ids.map((id) => `{"${id}":1}`)] });
    const first = rows(['a1', 'a2']);
    const combined = combinedInsertStatement([
      { sql: 'INSERT INTO s (x) SELECT $1', parameters: [1] },
      first,
      { sql: 'INSERT INTO s (x) SELECT $1', parameters: [2] },
      rows(['b1']),
      { sql: 'INSERT INTO t (x) SELECT unnest($1::int[])', parameters: [[3]] },
      rows(['c1']),
    ]);
    expect(combined).toEqual({
      sql:
        'WITH s0 AS (INSERT INTO s (x) SELECT $1), ' +
        's1 AS (INSERT INTO o (id, p) SELECT * FROM unnest($2::uuid[], $3::jsonb[])), ' +
        's2 AS (INSERT INTO s (x) SELECT $4) INSERT INTO t (x) SELECT unnest($5::int[])',
      parameters: [
        1,
        ['a1', 'a2', 'b1', 'c1'],
        ['{"a1":1}', '{"a2":1}', '{"b1":1}', '{"c1":1}'],
        2,
        [3],
      ],
    });
    // The statements given are left as they were.
    expect(first.parameters).toEqual([
      ['a1', 'a2'],
      ['{"a1":1}', '{"a2":1}'],
    ]);
  });

  it('renumbers a combination once and gives each later call its own parameters', () => {
    const statements = (first: number) => [
      { sql: 'INSERT INTO a (x) SELECT $1', parameters: [first] },
      { sql: 'INSERT INTO b (x) SELECT $1', parameters: [first + 1] },
    ];
    const combined = combinedInsertStatement(statements(1));
    const again = combinedInsertStatement(statements(7));

    expect(again?.sql).toBe(combined?.sql);
    expect(again?.parameters).toEqual([7, 8]);
  });

  it('tells apart the same texts with other parameter counts', () => {
    const sql = 'INSERT INTO a (x) SELECT $1';
    const two = combinedInsertStatement([
      { sql, parameters: [1, 2] },
      { sql, parameters: [3] },
    ]);
    const one = combinedInsertStatement([
      { sql, parameters: [1] },
      { sql, parameters: [3] },
    ]);

    expect(two?.sql).toContain('INSERT INTO a (x) SELECT $3');
    expect(one?.sql).toContain('INSERT INTO a (x) SELECT $2');
  });

  it('keeps two-digit parameters whole', () => {
    const many = Array.from({ length: 12 }, (_, index) => index);
    const sql = `INSERT INTO t SELECT ${many.map((index) => `$${index + 1}`).join(', ')}`;
    const combined = combinedInsertStatement([
      { sql, parameters: many },
      { sql, parameters: many },
    ]);
    expect(combined?.sql).toContain(
      'INSERT INTO t SELECT $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24',
    );
    expect(combined?.parameters).toHaveLength(24);
  });
});

describe('statementsShape', () => {
  const a = 'INSERT INTO a (x) SELECT $1';
  const b = 'INSERT INTO b (x) SELECT $1';

  it('is the same for the same texts and parameter counts, whatever the values', () => {
    expect(statementsShape([{ sql: a, parameters: [1] }])).toBe(
      statementsShape([{ sql: `INSERT INTO a (x) SELECT ${'$1'}`, parameters: ['other'] }]),
    );
  });

  it('tells apart other texts, other parameter counts and another order', () => {
    const shapes = [
      [{ sql: a, parameters: [1] }],
      [{ sql: b, parameters: [1] }],
      [{ sql: a, parameters: [1, 2] }],
      [
        { sql: a, parameters: [1] },
        { sql: b, parameters: [1] },
      ],
      [
        { sql: b, parameters: [1] },
        { sql: a, parameters: [1] },
      ],
    ].map(statementsShape);

    expect(new Set(shapes).size).toBe(shapes.length);
  });
});
