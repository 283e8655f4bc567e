import type { DataSource, EntityManager } from 'typeorm';

import type { InsertStatement } from '../messages/insert-rows';
import { SubmissionCommits } from './submission-commits.service';

/** What the fake database ran: each statement's text, and whether in a transaction. */
interface Ran {
  sql: string;
  inTransaction: boolean;
}

/**
 * A DataSource whose statements are recorded; a statement whose text is in `failing` fails, and
 * a transaction that ran one commits nothing. `hold` keeps the first statement run waiting.
 */
function fakeDataSource(failing: ReadonlySet<string>) {
  const ran: Ran[] = [];
  const committed: string[] = [];
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const managerOf = (inTransaction: boolean, pending: string[]) =>
    ({
      queryRunner: {
        connect: () =>
          Promise.resolve({
            query: async ({ text }: { text: string }) => {
              const first = ran.length === 0;
              ran.push({ sql: text, inTransaction });
              if (first) await held;
              if (failing.has(text)) throw new Error(`failed: ${text}`);
              pending.push(text);
              return { rows: [] };
            },
          }),
        release: () => Promise.resolve(),
      },
    }) as unknown as EntityManager;
  const dataSource = {
    get manager() {
      return managerOf(false, committed);
    },
    transaction: async (work: (manager: EntityManager) => Promise<void>) => {
      const pending: string[] = [];
      await work(managerOf(true, pending));
      committed.push(...pending);
    },
  } as unknown as DataSource;
  return { dataSource, ran, committed, release };
}

function statement(sql: string): InsertStatement {
  return { sql, parameters: [] };
}

describe('SubmissionCommits', () => {
  it('commits a submission at once when nothing is in flight, and those that waited together', async () => {
    const db = fakeDataSource(new Set());
    const commits = new SubmissionCommits(db.dataSource);

    const first = commits.commit(statement('first'));
    const waiting = ['second', 'third'].map((sql) => commits.commit(statement(sql)));
    db.release();
    await Promise.all([first, ...waiting]);

    expect(db.ran).toEqual([
      { sql: 'first', inTransaction: false },
      { sql: 'second', inTransaction: true },
      { sql: 'third', inTransaction: true },
    ]);
    expect(db.committed).toEqual(['first', 'second', 'third']);
  });

  it('runs each statement of a failed batch alone, so that only the one at fault fails', async () => {
    const db = fakeDataSource(new Set(['repeated']));
    const commits = new SubmissionCommits(db.dataSource);

    const first = commits.commit(statement('first'));
    const repeated = commits.commit(statement('repeated'));
    const other = commits.commit(statement('other'));
    db.release();

    await expect(first).resolves.toBeUndefined();
    await expect(repeated).rejects.toThrow('failed: repeated');
    await expect(other).resolves.toBeUndefined();
    expect(db.committed).toEqual(['first', 'other']);
  });
});
