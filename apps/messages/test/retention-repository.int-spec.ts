import { randomUUID } from 'node:crypto';

import { DataSource } from 'typeorm';

import { messagesDataSourceOptions } from '../src/database/data-source-options';
import { runMessagesMigrations } from '../src/database/run-messages-migrations';
import { MessagesRepository } from '../src/messages/messages.repository';
import { RetentionRepository } from '../src/retention/retention.repository';
import { IsolatedPlatform } from './isolated-platform';
import { contentRow, messageRow } from './message-row-factory';

/**
 * The retention purges against the real messages schema, on a database of their own (they
 * purge whatever is due): bounded batches, earliest first, rows locked elsewhere skipped.
 */

const HOUR_MS = 3_600_000;
const hoursFromNow = (hours: number): Date => new Date(Date.now() + hours * HOUR_MS);

interface StoredContent {
  message_id: string;
  purged: boolean;
  purged_at: Date | null;
}

describe('RetentionRepository against PostgreSQL', () => {
  let platform: IsolatedPlatform | undefined;
  let dataSource: DataSource | undefined;
  let retention: RetentionRepository;
  let messages: MessagesRepository;

  beforeAll(async () => {
    platform = await IsolatedPlatform.start();
    await runMessagesMigrations(platform.databaseUrl);
    dataSource = new DataSource(messagesDataSourceOptions(platform.databaseUrl, 4));
    await dataSource.initialize();
    retention = new RetentionRepository(dataSource);
    messages = new MessagesRepository(dataSource);
  }, 60_000);

  afterAll(async () => {
    await dataSource?.destroy();
    await platform?.stop();
  }, 60_000);

  const db = (): DataSource => {
    if (!dataSource) throw new Error('no database');
    return dataSource;
  };

  /** Stores one message per entry, with content (purged when `raw` is null). */
  async function store(
    entries: Array<{ purgeAt?: Date; retainUntil?: Date; raw?: Buffer | null }>,
  ): Promise<string[]> {
    const ids = entries.map(() => randomUUID());
    await db().transaction(async (manager) => {
      await messages.insertMessages(
        ids.map((id, index) =>
          messageRow(id, { retainUntil: entries[index]?.retainUntil ?? hoursFromNow(24) }),
        ),
        manager,
      );
      await messages.insertContents(
        ids.map((id, index) => {
          const entry = entries[index];
          const raw = entry?.raw === undefined ? Buffer.from(`raw ${id}`) : entry.raw;
          return { ...contentRow(id, raw), purgeAt: entry?.purgeAt ?? hoursFromNow(24) };
        }),
        manager,
      );
    });
    return ids;
  }

  async function contents(ids: string[]): Promise<StoredContent[]> {
    return db().query<StoredContent[]>(
      `SELECT message_id, raw IS NULL AS purged, purged_at FROM messages.message_contents
       WHERE message_id = ANY($1::uuid[]) ORDER BY array_position($1::uuid[], message_id)`,
      [ids],
    );
  }

  const purgedOf = async (ids: string[]): Promise<boolean[]> =>
    (await contents(ids)).map((row) => row.purged);

  it('empties due contents in bounded batches, earliest first, leaving the others', async () => {
    const [late, early, middle, notDue, purgedBefore] = await store([
      { purgeAt: hoursFromNow(-1) },
      { purgeAt: hoursFromNow(-3) },
      { purgeAt: hoursFromNow(-2) },
      { purgeAt: hoursFromNow(1) },
      { purgeAt: hoursFromNow(-4), raw: null },
    ]);
    const ids = [late, early, middle, notDue, purgedBefore].map(String);
    const purgedAtBefore = (await contents(ids))[4]?.purged_at;

    await expect(retention.purgeDueContents(2)).resolves.toBe(2);
    await expect(purgedOf(ids)).resolves.toEqual([false, true, true, false, true]);
    await expect(retention.purgeDueContents(2)).resolves.toBe(1);
    await expect(retention.purgeDueContents(2)).resolves.toBe(0);

    const rows = await contents(ids);
    expect(rows.map((row) => row.purged)).toEqual([true, true, true, false, true]);
    expect(rows.slice(0, 3).every((row) => row.purged_at instanceof Date)).toBe(true);
    expect(rows[3]?.purged_at).toBeNull();
    expect(rows[4]?.purged_at).toEqual(purgedAtBefore);
  });

  it('skips due contents another transaction holds instead of waiting for them', async () => {
    const [held, free] = (
      await store([{ purgeAt: hoursFromNow(-2) }, { purgeAt: hoursFromNow(-1) }])
    ).map(String);
    const runner = db().createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction();
      await runner.query(
        'SELECT 1 FROM messages.message_contents WHERE message_id = $1 FOR UPDATE',
        [held],
      );

      await expect(retention.purgeDueContents(10)).resolves.toBe(1);
      await expect(purgedOf([held, free])).resolves.toEqual([false, true]);
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
    await expect(retention.purgeDueContents(10)).resolves.toBe(1);
    await expect(purgedOf([held, free])).resolves.toEqual([true, true]);
  });

  it('deletes messages past their metadata retention in bounded batches, contents with them', async () => {
    const ids = (
      await store([
        { retainUntil: hoursFromNow(-1) },
        { retainUntil: hoursFromNow(-3) },
        { retainUntil: hoursFromNow(1) },
        { retainUntil: hoursFromNow(-2) },
      ])
    ).map(String);
    const remaining = async () => {
      const rows = await db().query<Array<{ id: string }>>(
        `SELECT id FROM messages.messages WHERE id = ANY($1::uuid[])
         ORDER BY array_position($1::uuid[], id)`,
        [ids],
      );
      return rows.map((row) => row.id);
    };

    await expect(retention.purgeExpiredMessages(2)).resolves.toBe(2);
    await expect(remaining()).resolves.toEqual([ids[0], ids[2]]);
    await expect(retention.purgeExpiredMessages(2)).resolves.toBe(1);
    await expect(retention.purgeExpiredMessages(2)).resolves.toBe(0);
    await expect(remaining()).resolves.toEqual([ids[2]]);
    await expect(contents(ids)).resolves.toEqual([
      expect.objectContaining({ message_id: ids[2], purged: false }),
    ]);
  });

  it('empties one content at once in the given transaction, and leaves a purged one as it is', async () => {
    const [id, other] = (await store([{}, {}])).map(String);

    await db().transaction((manager) => retention.purgeContentNow(id, manager));
    const [first] = await contents([id]);
    expect(first?.purged).toBe(true);
    expect(first?.purged_at).toBeInstanceOf(Date);
    await expect(purgedOf([other])).resolves.toEqual([false]);

    await retention.purgeContentNow(id);
    await expect(contents([id])).resolves.toEqual([first]);
    await expect(
      db().transaction(async (manager) => {
        await retention.purgeContentNow(other, manager);
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    await expect(purgedOf([other])).resolves.toEqual([false]);
  });
});
