import { randomBytes, randomUUID } from 'node:crypto';

import { serviceDataSourceOptions } from '@envoi/shared-database';
import { DataSource } from 'typeorm';

import { Inbox, ProcessedEventEntity } from '../src';

describe('Inbox (real PostgreSQL)', () => {
  const schema = `inbox_int_${randomBytes(4).toString('hex')}`;
  const inbox = new Inbox(schema);
  let dataSource: DataSource | undefined;

  const db = (): DataSource => {
    if (!dataSource) throw new Error('no database');
    return dataSource;
  };

  beforeAll(async () => {
    dataSource = new DataSource(
      serviceDataSourceOptions({
        url: process.env['DATABASE_URL'] ?? '',
        schema,
        entities: [ProcessedEventEntity],
        migrations: [],
        poolSize: 4,
      }),
    );
    await dataSource.initialize();
    await dataSource.query(`CREATE SCHEMA "${schema}"`);
    // The table as the entity describes it (services generate the same in their migrations).
    await dataSource.synchronize();
  });

  afterAll(async () => {
    await dataSource?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await dataSource?.destroy();
  });

  it('claims an event once: a second claim, alone or among new ones, answers only the new', async () => {
    const [first, second, third] = [randomUUID(), randomUUID(), randomUUID()];
    const record = randomUUID();

    await expect(
      inbox.claim(db(), [{ eventId: first, type: 't.a', recordId: record }]),
    ).resolves.toEqual(new Set([first]));
    await expect(inbox.claim(db(), [{ eventId: first }])).resolves.toEqual(new Set());
    await expect(
      inbox.claim(db(), [{ eventId: first }, { eventId: second }, { eventId: third }]),
    ).resolves.toEqual(new Set([second, third]));
    await expect(inbox.seen(db(), first)).resolves.toBe(true);
    await expect(inbox.seen(db(), randomUUID())).resolves.toBe(false);
    const [row] = await db().query<Array<{ type: string; record_id: string }>>(
      `SELECT type, record_id FROM "${schema}".processed_events WHERE event_id = $1`,
      [first],
    );
    expect(row).toEqual({ type: 't.a', record_id: record });
  });

  it('lets one of two transactions racing for an event claim it', async () => {
    const eventId = randomUUID();
    const claims = await Promise.all(
      [0, 1].map(() => db().transaction((manager) => inbox.claim(manager, [{ eventId }]))),
    );

    expect(claims.map((claimed) => claimed.size).sort()).toEqual([0, 1]);
  });

  it('purges the entries older than the retention, a bounded number at a time', async () => {
    const old = [randomUUID(), randomUUID(), randomUUID()];
    const recent = randomUUID();
    await inbox.claim(
      db(),
      [...old, recent].map((eventId) => ({ eventId })),
    );
    await db().query(
      `UPDATE "${schema}".processed_events SET processed_at = now() - interval '2 hours'
       WHERE event_id = ANY($1::varchar[])`,
      [old],
    );

    await expect(inbox.purgeOlderThan(db(), 3_600_000, 2)).resolves.toBe(2);
    await expect(inbox.purgeOlderThan(db(), 3_600_000, 2)).resolves.toBe(1);
    await expect(inbox.purgeOlderThan(db(), 3_600_000, 2)).resolves.toBe(0);
    await expect(inbox.seen(db(), recent)).resolves.toBe(true);
  });
});
