import { randomBytes, randomUUID } from 'node:crypto';

import { DELIVERY_STREAM, EVENTS_STREAM, type StreamSubject } from '@envoi/contracts-core';
import { enqueueOutbox, type OutboxEntry, OutboxMessageEntity } from '@envoi/shared-outbox';
import {
  DataSource,
  type EntityManager,
  type EntityTarget,
  type InsertQueryBuilder,
  type ObjectLiteral,
} from 'typeorm';

import { messagesDataSourceOptions } from '../src/database/data-source-options';
import { runMessagesMigrations } from '../src/database/run-messages-migrations';
import { MessageEntity } from '../src/messages/message.entity';
import { MessageContentEntity } from '../src/messages/message-content.entity';
import {
  type MessageContentRow,
  type MessageRow,
  MessagesRepository,
} from '../src/messages/messages.repository';
import { at, contentRow, messageRow } from './message-row-factory';

/**
 * The unnest INSERTs of an accepted send (messages.repository.ts, and the outbox's) against the real
 * messages schema: the same rows as TypeORM's multi-row INSERTs wrote, for any text.
 */

/** Text that array literals, JSON and SQL quoting could get wrong. */
const AWKWARD = [
  'a,b',
  'say "hi"',
  '{braces}',
  '}{',
  'back\\slash',
  '\\"',
  '}{,"\\',
  'NULL',
  'null',
  '',
  ' padded ',
  "it's",
  '$1',
  'tab\there\nnewline',
  'ünïcödé ✉',
];

/** The statements these replace, as accept and the outbox wrote them with TypeORM. */
async function typeormInsert<T extends ObjectLiteral>(
  manager: EntityManager,
  target: EntityTarget<T>,
  // Rows as plain objects: TypeORM's deep-partial type refuses a json column of unknown values.
  rows: readonly object[],
): Promise<void> {
  await manager
    .createQueryBuilder()
    .insert()
    .into(target)
    .values(rows as Parameters<InsertQueryBuilder<T>['values']>[0])
    .updateEntity(false)
    .execute();
}

function typeormOutboxRows(entries: OutboxEntry[]): ObjectLiteral[] {
  return entries.map((entry) => ({
    id: entry.id,
    stream: entry.subject.stream,
    subject: entry.subject.name,
    payload: entry.payload as object,
    ...(entry.availableAt ? { availableAt: entry.availableAt } : {}),
    publishedAt: null,
    cancelledAt: null,
    failedAttempts: 0,
    lastError: null,
  }));
}

describe('message rows (unnest inserts)', () => {
  let dataSource: DataSource | undefined;
  let repository: MessagesRepository | undefined;

  const db = (): DataSource => {
    if (!dataSource) throw new Error('no database');
    return dataSource;
  };
  const insertMessages = (manager: EntityManager, rows: readonly MessageRow[]) => {
    if (!repository) throw new Error('no database');
    return repository.insertMessages(rows, manager);
  };
  const insertMessageContents = (manager: EntityManager, rows: readonly MessageContentRow[]) => {
    if (!repository) throw new Error('no database');
    return repository.insertContents(rows, manager);
  };

  beforeAll(async () => {
    const url = process.env['DATABASE_URL'] ?? '';
    await runMessagesMigrations(url);
    dataSource = new DataSource(messagesDataSourceOptions(url, 2));
    await dataSource.initialize();
    repository = new MessagesRepository(dataSource);
  }, 60_000);

  afterAll(async () => {
    await dataSource?.destroy();
  });

  /** The messages' columns but the ones named, as JSON, in seq order. */
  async function storedMessages(ids: string[], without: string[]) {
    const rows = await db().query<Array<{ row: Record<string, unknown> }>>(
      `SELECT to_jsonb(m) - $2::text[] AS row FROM messages.messages m
       WHERE id = ANY($1::uuid[]) ORDER BY seq`,
      [ids, without],
    );
    return rows.map(({ row }) => row);
  }

  it('stores the same messages as the TypeORM insert, value for value', async () => {
    const variants: Array<Partial<MessageRow>> = [
      {},
      { envelopeRecipients: AWKWARD, tags: AWKWARD, subject: AWKWARD.join('|') },
      {
        kind: 'message',
        api: 'v2',
        credentialId: null,
        tags: [],
        sandbox: false,
        sandboxResult: null,
        firstAttemptAt: null,
        expiresAt: null,
        sentAt: null,
        deliveredAt: null,
        numAttempts: 0,
        deliveryAttempts: [],
        openCount: 0,
        clickCount: 0,
        bounceClassification: null,
        status: 'Received',
      },
    ];
    const ours = variants.map((changes) => messageRow(randomUUID(), changes));
    const theirs = ours.map((row) => ({ ...row, id: randomUUID() }));
    await db().transaction((manager) => insertMessages(manager, ours));
    await db().transaction((manager) => typeormInsert(manager, MessageEntity, theirs));

    const without = ['id', 'seq', 'message_id_header'];
    const expected = await storedMessages(
      theirs.map((row) => row.id),
      without,
    );
    expect(expected).toHaveLength(3);
    await expect(
      storedMessages(
        ours.map((row) => row.id),
        without,
      ),
    ).resolves.toEqual(expected);
  });

  it('reads back arrays of any text, empty arrays and nulls exactly as given', async () => {
    const rows = [
      messageRow(randomUUID(), { envelopeRecipients: AWKWARD, tags: [...AWKWARD].reverse() }),
      messageRow(randomUUID(), { envelopeRecipients: [], tags: [] }),
      messageRow(randomUUID(), { envelopeRecipients: ['NULL'], tags: [''], credentialId: null }),
    ];
    await db().transaction((manager) => insertMessages(manager, rows));

    for (const row of rows) {
      const found = await db().manager.findOneByOrFail(MessageEntity, { id: row.id });
      expect({ ...found, seq: undefined }).toEqual({ ...row, seq: undefined });
    }
    const nulls = await db().query<Array<{ tags: null; envelope: null; count: number }>>(
      `SELECT array_position(tags, NULL) AS tags, array_position(envelope_recipients, NULL)
       AS envelope, cardinality(envelope_recipients) AS count FROM messages.messages
       WHERE id = $1`,
      [rows[0]?.id],
    );
    expect(nulls).toEqual([{ tags: null, envelope: null, count: AWKWARD.length }]);
  });

  it('stores contents byte for byte, large, empty and purged ones included', async () => {
    const large = randomBytes(8 * 1024 * 1024);
    const raws = [large, Buffer.from([0, 0x5c, 0x22, 0x7b, 0x2c, 0xff]), Buffer.alloc(0), null];
    const ids = raws.map(() => randomUUID());
    const twins = raws.map(() => randomUUID());
    await db().transaction(async (manager) => {
      await insertMessages(
        manager,
        ids.map((id) => messageRow(id)),
      );
      await insertMessageContents(
        manager,
        ids.map((id, index) => contentRow(id, raws[index] ?? null)),
      );
    });
    await db().transaction(async (manager) => {
      await typeormInsert(
        manager,
        MessageEntity,
        twins.map((id) => messageRow(id)),
      );
      await typeormInsert(
        manager,
        MessageContentEntity,
        twins.map((id, index) => contentRow(id, raws[index] ?? null)),
      );
    });

    for (const [index, id] of ids.entries()) {
      const raw = raws[index] ?? null;
      const { raw: foundRaw, ...found } = await db().manager.findOneByOrFail(MessageContentEntity, {
        messageId: id,
      });
      expect(found).toEqual({ ...contentRow(id, raw), raw: undefined });
      expect(raw === null ? foundRaw === null : foundRaw?.equals(raw)).toBe(true);
    }
    const compare = async (messageIds: string[]) =>
      db().query<unknown[]>(
        `SELECT md5(raw) AS md5, octet_length(raw) AS length,
                to_jsonb(c) - 'message_id' - 'raw' AS row
         FROM messages.message_contents c
         WHERE message_id = ANY($1::uuid[]) ORDER BY array_position($1::uuid[], message_id)`,
        [messageIds],
      );
    const expected = await compare(twins);
    expect(expected).toHaveLength(4);
    await expect(compare(ids)).resolves.toEqual(expected);
  }, 60_000);

  it('numbers the rows in the order given', async () => {
    const rows = Array.from({ length: 250 }, () => messageRow(randomUUID()));
    await db().transaction((manager) => insertMessages(manager, rows));

    const order = await db().query<Array<{ id: string }>>(
      'SELECT id FROM messages.messages WHERE id = ANY($1::uuid[]) ORDER BY seq',
      [rows.map((row) => row.id)],
    );
    expect(order.map(({ id }) => id)).toEqual(rows.map((row) => row.id));
  });

  it('refuses text too long for its column, as before, rather than cutting it', async () => {
    const row = messageRow(randomUUID(), { domain: `${'d'.repeat(250)}.test` });

    await expect(db().transaction((manager) => insertMessages(manager, [row]))).rejects.toThrow(
      /too long/,
    );
  });

  it('writes nothing when the transaction fails after the inserts', async () => {
    const id = randomUUID();
    const entry: OutboxEntry = {
      id: randomUUID(),
      subject: { kind: 'stream', stream: EVENTS_STREAM, name: 'events.t.v1' },
      payload: { id },
    };
    await expect(
      db().transaction(async (manager) => {
        await insertMessages(manager, [messageRow(id)]);
        await insertMessageContents(manager, [contentRow(id, Buffer.from('x'))]);
        await enqueueOutbox(manager, [entry]);
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');

    const counts = await db().query<Array<{ n: string }>>(
      `SELECT (SELECT count(*) FROM messages.messages WHERE id = $1)
            + (SELECT count(*) FROM messages.message_contents WHERE message_id = $1)
            + (SELECT count(*) FROM messages.outbox WHERE id = $2) AS n`,
      [id, entry.id],
    );
    expect(counts).toEqual([{ n: '0' }]);
  });

  describe('outbox rows', () => {
    const event: StreamSubject<unknown> = {
      kind: 'stream',
      stream: EVENTS_STREAM,
      name: 'events.message.reception.v1',
    };
    const job: StreamSubject<unknown> = {
      kind: 'stream',
      stream: DELIVERY_STREAM,
      name: 'delivery.jobs.v1',
    };

    function entries(): OutboxEntry[] {
      const due = at('2031-02-03T04:05:06.789Z');
      return [
        { id: randomUUID(), subject: event, payload: { text: AWKWARD, n: 1.5, ok: true } },
        { id: randomUUID(), subject: event, payload: { nested: { a: [null, {}] } } },
        { id: randomUUID(), subject: job, payload: { attempt: 1 }, availableAt: due },
        { id: randomUUID(), subject: job, payload: { attempt: 1 } },
      ];
    }

    /** The rows' columns, with their times relative to their transaction's start. */
    async function outbox(ids: string[]) {
      const rows = await db().query<Array<{ row: Record<string, unknown> }>>(
        `SELECT to_jsonb(o) - 'id' - 'seq' - 'created_at' - 'available_at'
                || jsonb_build_object(
                     'created_now', created_at = (SELECT min(created_at) FROM messages.outbox
                                                  WHERE id = ANY($1::uuid[])),
                     'available_at', CASE WHEN available_at = created_at THEN 'now'
                       ELSE (extract(epoch FROM available_at) * 1000)::bigint::text END) AS row
         FROM messages.outbox o WHERE id = ANY($1::uuid[]) ORDER BY seq`,
        [ids],
      );
      return rows.map(({ row }) => row);
    }

    it('stores what the TypeORM insert stored, in order, due now unless scheduled', async () => {
      const ours = entries();
      const theirs = ours.map((entry) => ({ ...entry, id: randomUUID() }));
      await db().transaction((manager) => enqueueOutbox(manager, ours));
      await db().transaction((manager) =>
        typeormInsert(manager, OutboxMessageEntity, typeormOutboxRows(theirs)),
      );

      const expected = await outbox(theirs.map((entry) => entry.id));
      expect(expected.map((row) => row['available_at'])).toEqual([
        'now',
        'now',
        String(at('2031-02-03T04:05:06.789Z').getTime()),
        'now',
      ]);
      expect(expected.every((row) => row['created_now'] === true)).toBe(true);
      await expect(outbox(ours.map((entry) => entry.id))).resolves.toEqual(expected);
    });

    it('keeps the order of many rows and refuses a duplicate id', async () => {
      const many = Array.from({ length: 300 }, (_, index) => ({
        id: randomUUID(),
        subject: index % 2 ? job : event,
        payload: { index },
      }));
      await db().transaction((manager) => enqueueOutbox(manager, many));
      const order = await db().query<Array<{ id: string }>>(
        'SELECT id FROM messages.outbox WHERE id = ANY($1::uuid[]) ORDER BY seq',
        [many.map((entry) => entry.id)],
      );
      expect(order.map(({ id }) => id)).toEqual(many.map((entry) => entry.id));

      await expect(
        db().transaction((manager) => enqueueOutbox(manager, many.slice(0, 1))),
      ).rejects.toThrow(/outbox_pkey/);
    });
  });
});
