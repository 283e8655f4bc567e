import { GroupCommits } from './group-commits';
import type { InsertStatement } from './insert-rows';

/** A statement run, settled when the test says. */
interface Executed {
  statement: InsertStatement;
  commit: () => void;
  fail: (error: Error) => void;
}

function setup(options = { lanes: 1, maxCallersPerGroup: 10 }) {
  const executed: Executed[] = [];
  const commits = new GroupCommits<string>(
    (statement) =>
      new Promise<void>((resolve, reject) => {
        executed.push({ statement, commit: resolve, fail: reject });
      }),
    {
      ...options,
      groupStatements: (notes) => [
        { sql: 'INSERT INTO counts (notes) VALUES ($1)', parameters: [notes.join(',')] },
      ],
    },
  );
  return { executed, commits };
}

function insertInto(table: string, value: string): InsertStatement {
  return { sql: `INSERT INTO ${table} (v) VALUES ($1)`, parameters: [value] };
}

/** Lets the promise callbacks queued so far run. */
async function settle(): Promise<void> {
  for (let turn = 0; turn < 10; turn += 1) await Promise.resolve();
}

/** Records when each promise settled, and how. */
function watch(promise: Promise<void>): { outcome: string | undefined } {
  const watched: { outcome: string | undefined } = { outcome: undefined };
  promise.then(
    () => (watched.outcome = 'committed'),
    (error: unknown) => (watched.outcome = `failed: ${(error as Error).message}`),
  );
  return watched;
}

describe('GroupCommits', () => {
  it('runs a caller at once when its lane is idle, and settles it once committed', async () => {
    const { executed, commits } = setup();
    const first = watch(commits.commit([insertInto('a', '1'), insertInto('b', '2')]));
    expect(executed.map(({ statement }) => statement)).toEqual([
      {
        sql: 'WITH s0 AS (INSERT INTO a (v) VALUES ($1)) INSERT INTO b (v) VALUES ($2)',
        parameters: ['1', '2'],
      },
    ]);
    await settle();
    expect(first.outcome).toBeUndefined();
    executed[0]?.commit();
    await settle();
    expect(first.outcome).toBe('committed');
  });

  it('commits the callers that came meanwhile in one statement, each settled by its commit', async () => {
    const { executed, commits } = setup();
    const first = watch(commits.commit([insertInto('a', '1')]));
    const second = watch(commits.commit([insertInto('a', '2')]));
    const third = watch(commits.commit([insertInto('a', '3')]));
    expect(executed).toHaveLength(1);

    executed[0]?.commit();
    await settle();
    expect(first.outcome).toBe('committed');
    expect(executed[1]?.statement).toEqual({
      sql: 'WITH s0 AS (INSERT INTO a (v) VALUES ($1)) INSERT INTO a (v) VALUES ($2)',
      parameters: ['2', '3'],
    });
    expect([second.outcome, third.outcome]).toEqual([undefined, undefined]);
    executed[1]?.commit();
    await settle();
    expect([second.outcome, third.outcome]).toEqual(['committed', 'committed']);
  });

  it('runs each caller of a failed group alone, so only the failing one fails', async () => {
    const { executed, commits } = setup();
    void commits.commit([insertInto('a', '0')]);
    const good = watch(commits.commit([insertInto('a', 'good')]));
    const duplicate = watch(commits.commit([insertInto('a', 'duplicate')]));
    executed[0]?.commit();
    await settle();
    executed[1]?.fail(new Error('duplicate key'));
    await settle();
    const alone = executed.slice(2);
    expect(alone.map(({ statement }) => statement.parameters)).toEqual([['good'], ['duplicate']]);
    expect([good.outcome, duplicate.outcome]).toEqual([undefined, undefined]);
    alone[0]?.commit();
    alone[1]?.fail(new Error('duplicate key'));
    await settle();
    expect(good.outcome).toBe('committed');
    expect(duplicate.outcome).toBe('failed: duplicate key');
  });

  it('fails a caller alone whose statement fails, and goes on with those that waited', async () => {
    const { executed, commits } = setup();
    const first = watch(commits.commit([insertInto('a', '1')]));
    const second = watch(commits.commit([insertInto('a', '2')]));
    executed[0]?.fail(new Error('connection lost'));
    await settle();
    expect(first.outcome).toBe('failed: connection lost');
    executed[1]?.commit();
    await settle();
    expect(second.outcome).toBe('committed');
  });

  it('starts a statement in each idle lane, then queues on the lane with the fewest waiting', async () => {
    const { executed, commits } = setup({ lanes: 2, maxCallersPerGroup: 10 });
    for (const value of ['1', '2', '3', '4', '5']) void commits.commit([insertInto('a', value)]);
    expect(executed.map(({ statement }) => statement.parameters)).toEqual([['1'], ['2']]);
    executed[1]?.commit();
    await settle();
    executed[0]?.commit();
    await settle();
    expect(executed.slice(2).map(({ statement }) => statement.parameters)).toEqual([
      ['4'],
      ['3', '5'],
    ]);
  });

  it('adds one statement for the notes of a group, and for a note of a caller run alone', async () => {
    const { executed, commits } = setup();
    void commits.commit([insertInto('a', '0')], 'zero');
    void commits.commit([insertInto('a', '1')], 'one');
    void commits.commit([insertInto('a', '2')]);
    void commits.commit([insertInto('a', '3')], 'three');
    executed[0]?.commit();
    await settle();
    expect(executed.map(({ statement }) => statement)).toEqual([
      {
        sql: 'WITH s0 AS (INSERT INTO counts (notes) VALUES ($1)) INSERT INTO a (v) VALUES ($2)',
        parameters: ['zero', '0'],
      },
      {
        sql:
          'WITH s0 AS (INSERT INTO counts (notes) VALUES ($1)), s1 AS (INSERT INTO a (v) VALUES ($2)), ' +
          's2 AS (INSERT INTO a (v) VALUES ($3)) INSERT INTO a (v) VALUES ($4)',
        parameters: ['one,three', '1', '2', '3'],
      },
    ]);
    executed[1]?.fail(new Error('duplicate key'));
    await settle();
    expect(executed.slice(2).map(({ statement }) => statement.parameters)).toEqual([
      ['one', '1'],
      ['2'],
      ['three', '3'],
    ]);
  });

  it('orders a group by the shapes of its callers, whatever order they came in', async () => {
    const orders = [
      ['a', 'b'],
      ['b', 'a'],
    ];
    const texts: string[] = [];
    for (const order of orders) {
      const { executed, commits } = setup();
      void commits.commit([insertInto('first', '0')]);
      for (const table of order) void commits.commit([insertInto(table, table)]);
      executed[0]?.commit();
      await settle();
      texts.push(executed[1]?.statement.sql ?? '');
      expect(executed[1]?.statement.parameters).toEqual(['a', 'b']);
    }
    expect(texts[0]).toBe(texts[1]);
  });

  it('puts at most maxCallersPerGroup callers in a group', async () => {
    const { executed, commits } = setup({ lanes: 1, maxCallersPerGroup: 2 });
    for (const value of ['0', '1', '2', '3']) void commits.commit([insertInto('a', value)]);
    executed[0]?.commit();
    await settle();
    executed[1]?.commit();
    await settle();
    expect(executed.map(({ statement }) => statement.parameters)).toEqual([
      ['0'],
      ['1', '2'],
      ['3'],
    ]);
  });
});

describe('GroupCommits gathering the callers of a turn', () => {
  const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

  function gathering(maxCallersPerGroup: number) {
    const executed: Array<{ parameters: unknown[]; commit: () => void }> = [];
    const commits = new GroupCommits<string>(
      (statement) =>
        new Promise<void>((resolve) => {
          executed.push({ parameters: statement.parameters, commit: resolve });
        }),
      { lanes: 2, maxCallersPerGroup, gatherTurn: true, groupStatements: () => [] },
    );
    return { executed, commits };
  }

  it('commits the callers of one turn in one group, at most maxCallersPerGroup each', async () => {
    const { executed, commits } = gathering(3);
    const callers = ['1', '2', '3', '4', '5'].map((value) =>
      watch(commits.commit([insertInto('a', value)])),
    );
    expect(executed).toHaveLength(0);
    await nextTurn();
    expect(executed.map(({ parameters }) => parameters)).toEqual([
      ['1', '2', '3'],
      ['4', '5'],
    ]);
    executed[0]?.commit();
    await settle();
    expect(callers.map(({ outcome }) => outcome)).toEqual(Array(5).fill(undefined));
    executed[1]?.commit();
    await settle();
    expect(callers.map(({ outcome }) => outcome)).toEqual(Array(5).fill('committed'));
  });

  it('queues the callers of a later turn behind the lanes in flight', async () => {
    const { executed, commits } = gathering(16);
    void commits.commit([insertInto('a', '1')]);
    await nextTurn();
    void commits.commit([insertInto('a', '2')]);
    await nextTurn();
    void commits.commit([insertInto('a', '3')]);
    void commits.commit([insertInto('a', '4')]);
    await nextTurn();
    expect(executed.map(({ parameters }) => parameters)).toEqual([['1'], ['2']]);
    executed[0]?.commit();
    await settle();
    expect(executed.map(({ parameters }) => parameters)).toEqual([['1'], ['2'], ['3', '4']]);
  });
});
