import { randomUUID } from 'node:crypto';

import { DELIVERY_STREAM, EVENTS_STREAM } from '@envoi/contracts-core';
import { MessagesStreamSubjects } from '@envoi/contracts-messages';
import { DataSource, type QueryRunner } from 'typeorm';

import { messagesDataSourceOptions } from '../src/database/data-source-options';
import { VersionedStreamSubjects1795621000001 } from '../src/database/migrations/1795621000001-VersionedStreamSubjects';
import { runMessagesMigrations } from '../src/database/run-messages-migrations';

/**
 * An upgrade with outbox rows still to publish: they move to the versioned subjects the
 * consumers filter now; published rows keep theirs. In a transaction rolled back at the end, so
 * the service tests sharing the schema never see these rows.
 */
describe('VersionedStreamSubjects migration (messages outbox)', () => {
  let dataSource: DataSource | undefined;
  let runner: QueryRunner | undefined;
  const migration = new VersionedStreamSubjects1795621000001();

  const query = (sql: string, parameters?: unknown[]) => {
    if (!runner) throw new Error('no query runner');
    return runner.query(sql, parameters) as Promise<Array<{ id: string; subject: string }>>;
  };

  beforeAll(async () => {
    const url = process.env['DATABASE_URL'] ?? '';
    await runMessagesMigrations(url);
    dataSource = new DataSource(messagesDataSourceOptions(url, 1));
    await dataSource.initialize();
    runner = dataSource.createQueryRunner();
    await runner.startTransaction();
  }, 60_000);

  afterAll(async () => {
    await runner?.rollbackTransaction();
    await runner?.release();
    await dataSource?.destroy();
  });

  it('rewrites the unpublished rows to the versioned subjects, and back down', async () => {
    const rows = [
      { id: randomUUID(), stream: DELIVERY_STREAM, subject: 'delivery.jobs', published: false },
      {
        id: randomUUID(),
        stream: EVENTS_STREAM,
        subject: 'events.message.opened',
        published: false,
      },
      {
        id: randomUUID(),
        stream: EVENTS_STREAM,
        subject: 'events.message.clicked',
        published: true,
      },
    ];
    for (const row of rows) {
      await query(
        `INSERT INTO messages.outbox (id, stream, subject, payload, available_at, published_at)
         VALUES ($1, $2, $3, '{}', now() + interval '1 day', $4)`,
        [row.id, row.stream, row.subject, row.published ? new Date() : null],
      );
    }
    const subjects = async () =>
      (
        await query(`SELECT id, subject FROM messages.outbox WHERE id = ANY($1::uuid[])`, [
          rows.map((row) => row.id),
        ])
      )
        .map((row) => `${rows.findIndex(({ id }) => id === row.id)} ${row.subject}`)
        .sort();

    await migration.up(runner as QueryRunner);
    expect(await subjects()).toEqual([
      `0 ${MessagesStreamSubjects.deliveryJobs.name}`,
      `1 ${MessagesStreamSubjects.opened.name}`,
      '2 events.message.clicked',
    ]);

    // Twice is once: versioned rows are left as they are.
    await migration.up(runner as QueryRunner);
    expect(await subjects()).toContain(`1 ${MessagesStreamSubjects.opened.name}`);

    await migration.down(runner as QueryRunner);
    expect(await subjects()).toEqual([
      '0 delivery.jobs',
      '1 events.message.opened',
      '2 events.message.clicked',
    ]);
  });
});
