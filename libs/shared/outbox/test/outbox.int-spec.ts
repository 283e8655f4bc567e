import { randomBytes, randomUUID } from 'node:crypto';

import {
  DELIVERY_STREAM,
  EVENTS_STREAM,
  type StreamEvent,
  type StreamSubject,
} from '@envoi/contracts-core';
import { newTraceparent, runInTraceContext, traceHeaders } from '@envoi/shared-observability';
import type { DataSource } from 'typeorm';

import { cancelOutboxEntry, enqueueEvent, enqueueOutbox, type OutboxEntry } from '../src';
import { outboxTestDataSource } from './outbox-table';

const event: StreamSubject<unknown> = { kind: 'stream', stream: EVENTS_STREAM, name: 'events.t.a' };
const typed: StreamSubject<StreamEvent<'t.b', { n: number }>> = {
  kind: 'stream',
  stream: EVENTS_STREAM,
  name: 'events.t.b',
};
const job: StreamSubject<unknown> = { kind: 'stream', stream: DELIVERY_STREAM, name: 'jobs.t' };

interface Row {
  id: string;
  stream: string;
  subject: string;
  payload: unknown;
  due_now: boolean;
  available_at: Date;
  published_at: Date | null;
  cancelled_at: Date | null;
  failed_attempts: number;
  last_error: string | null;
}

describe('enqueueOutbox', () => {
  const schema = `outbox_int_${randomBytes(4).toString('hex')}`;
  let dataSource: DataSource | undefined;

  const db = (): DataSource => {
    if (!dataSource) throw new Error('no database');
    return dataSource;
  };

  beforeAll(async () => {
    dataSource = await outboxTestDataSource(schema, 2);
  });

  afterAll(async () => {
    await dataSource?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await dataSource?.destroy();
  });

  async function rows(ids: string[]): Promise<Row[]> {
    return db().query<Row[]>(
      `SELECT id, stream, subject, payload, available_at = created_at AS due_now, available_at,
              published_at, cancelled_at, failed_attempts, last_error
       FROM "${schema}".outbox WHERE id = ANY($1::uuid[]) ORDER BY seq`,
      [ids],
    );
  }

  /** Any time (now(), which the test cannot know). */
  const someTime: unknown = expect.any(Date);

  it("writes into the DataSource's schema, in order, each row with its stream and due time", async () => {
    const due = new Date('2031-02-03T04:05:06.789Z');
    const payload = { text: 'a,b "c" {d} \\e NULL ✉', list: [null, 1.5, true, {}], empty: '' };
    const entries: OutboxEntry[] = [
      { id: randomUUID(), subject: event, payload },
      { id: randomUUID(), subject: job, payload: { attempt: 1 }, availableAt: due },
      { id: randomUUID(), subject: event, payload: [] },
    ];
    await db().transaction((manager) => enqueueOutbox(manager, entries));

    const common = { published_at: null, cancelled_at: null, failed_attempts: 0, last_error: null };
    await expect(rows(entries.map((entry) => entry.id))).resolves.toEqual([
      {
        id: entries[0]?.id,
        stream: EVENTS_STREAM,
        subject: 'events.t.a',
        payload,
        due_now: true,
        available_at: someTime,
        ...common,
      },
      {
        id: entries[1]?.id,
        stream: DELIVERY_STREAM,
        subject: 'jobs.t',
        payload: { attempt: 1 },
        due_now: false,
        available_at: due,
        ...common,
      },
      {
        id: entries[2]?.id,
        stream: EVENTS_STREAM,
        subject: 'events.t.a',
        payload: [],
        due_now: true,
        available_at: someTime,
        ...common,
      },
    ]);
  });

  it('keeps the trace context the rows were written in, for the relay to publish', async () => {
    const context = { requestId: `req-${randomUUID()}`, traceparent: newTraceparent() };
    const id = randomUUID();
    await runInTraceContext(context, () =>
      db().transaction((manager) => enqueueOutbox(manager, [{ id, subject: event, payload: {} }])),
    );
    const untraced = randomUUID();
    await db().transaction((manager) =>
      enqueueOutbox(manager, [{ id: untraced, subject: event, payload: {} }]),
    );
    const stored = await db().query<Array<{ id: string; trace: unknown }>>(
      `SELECT id, trace FROM "${schema}".outbox WHERE id = ANY($1::uuid[])`,
      [[id, untraced]],
    );
    expect(Object.fromEntries(stored.map((row) => [row.id, row.trace]))).toEqual({
      [id]: traceHeaders(context),
      [untraced]: null,
    });
  });

  it('keeps enqueueEvent and cancelOutboxEntry working on the rows it writes', async () => {
    const id = randomUUID();
    await db().transaction((manager) =>
      enqueueEvent(manager, typed, {
        id,
        type: 't.b',
        timestamp: '2030-01-01T00:00:00Z',
        data: { n: 1 },
      }),
    );
    await expect(db().transaction((manager) => cancelOutboxEntry(manager, id))).resolves.toBe(true);
    const [row] = await rows([id]);
    expect(row).toMatchObject({ subject: 'events.t.b', payload: { data: { n: 1 } } });
    expect(row?.cancelled_at).toBeInstanceOf(Date);
  });

  it('writes nothing for no entries, and nothing at all when one row is refused', async () => {
    await db().transaction((manager) => enqueueOutbox(manager, []));
    const id = randomUUID();
    await expect(
      db().transaction((manager) =>
        enqueueOutbox(manager, [
          { id, subject: event, payload: {} },
          { id: randomUUID(), subject: event, payload: null },
        ]),
      ),
    ).rejects.toThrow(/null value in column "payload"/);
    await expect(rows([id])).resolves.toEqual([]);
  });
});
