import { randomUUID } from 'node:crypto';

import type { DeliveryOutcomeEvent } from '@envoi/contracts-delivery';
import type { DeliveryAttemptRecord } from '@envoi/contracts-messages';
import { pollUntil } from '@envoi/shared-testing';

import { DeliveryEventsService } from '../../src/delivery-events/delivery-events.service';
import { toDeliveryOutcome } from '../../src/delivery-events/delivery-outcome';
import { DeliveryStatesRepository } from '../../src/delivery-events/delivery-states.repository';
import {
  type EventTarget,
  handledUpTo,
  outcomeEvent,
  type OutcomeOptions,
  publishOutcome,
} from '../delivery-events';
import {
  messageBody,
  type MessagesTestApp,
  newSender,
  send,
  type Sender,
  UNKNOWN_ID,
  uuidOf,
} from '../messages-test-app';
import { storedRaw } from './accept.suite';

/** Attempt times a minute apart. */
function minute(n: number): Date {
  return new Date(Date.UTC(2030, 0, 1, 12, n));
}

/** The delivery fields of a message as stored. */
interface DeliveryRow {
  id: string;
  status: string;
  sent_at: Date | null;
  delivered_at: Date | null;
  bounce_classification: string | null;
  num_attempts: number;
  delivery_attempts: DeliveryAttemptRecord[];
  processed_events: number;
}

type EventSpec = [DeliveryOutcomeEvent['type'], OutcomeOptions];

/** What the stream carries: an event, or something that only looks like one. */
type Published = { id: string; type: DeliveryOutcomeEvent['type'] };

function nth<T>(items: readonly T[], index: number): T {
  const item = items[index];
  if (item === undefined) throw new Error(`no item ${index}`);
  return item;
}

/**
 * Delivery events applied in batches: one transaction for the events that arrive together (see
 * DeliveryEventsService.applyBatch), with the result of applying them one by one.
 */
export function deliveryBatchSuite(getApp: () => MessagesTestApp): void {
  describe('messages service: delivery events in batches', () => {
    let app: MessagesTestApp;
    let service: DeliveryEventsService;

    beforeAll(() => {
      app = getApp();
      service = app.app.get(DeliveryEventsService);
    });

    /** `count` accepted messages of one send (one recipient each), with what events need. */
    async function acceptedMany(
      count: number,
      overrides: Parameters<typeof messageBody>[1] = {},
      sender?: Sender,
    ): Promise<EventTarget[]> {
      const from = sender ?? (await newSender(app));
      const recipients = Array.from({ length: count }, (_, index) => ({
        email: `batch-${index}-${randomUUID().slice(0, 8)}@recipient.test`,
      }));
      const result = await send(app, from, messageBody(from, { recipients, ...overrides }));
      return result.data.map((created, index) => {
        const header = created.id ?? '';
        return {
          id: uuidOf(header),
          header,
          accountId: from.accountId,
          from: from.from,
          recipient: recipients[index]?.email ?? '',
        };
      });
    }

    async function rows(targets: readonly EventTarget[]): Promise<DeliveryRow[]> {
      const found = await app.dataSource.query<DeliveryRow[]>(
        `SELECT m.id, m.status, m.sent_at, m.delivered_at, m.bounce_classification,
                m.num_attempts, m.delivery_attempts,
                (SELECT count(*)::int FROM messages.processed_events p
                 WHERE p.record_id = m.id) AS processed_events
         FROM messages.messages m WHERE m.id = ANY($1::uuid[])`,
        [targets.map((target) => target.id)],
      );
      return targets.map((target) => {
        const row = found.find((candidate) => candidate.id === target.id);
        if (!row) throw new Error(`message ${target.id} is gone`);
        return row;
      });
    }

    /** A row without its id, to compare two messages. */
    function fields({ id: _id, ...rest }: DeliveryRow): Omit<DeliveryRow, 'id'> {
      return rest;
    }

    /** Each message's events, as the delivery service could report them (some out of order). */
    const HISTORIES: EventSpec[][] = [
      [
        ['message.transient_error', { status: 'Deferred', time: minute(0), reply: '451 later' }],
        ['message.transient_error', { status: 'Deferred', time: minute(2), attempt: 2 }],
        ['message.delivered', { status: 'Delivered', time: minute(4), attempt: 3 }],
      ],
      [
        ['message.delivered', { status: 'Delivered', time: minute(5), attempt: 2 }],
        ['message.transient_error', { status: 'Deferred', time: minute(0) }],
      ],
      [
        ['message.transient_error', { status: 'Deferred', time: minute(0) }],
        ['message.failed', { status: 'Failed', time: minute(9), attempt: 2 }],
        ['message.transient_error', { status: 'Deferred', time: minute(3), attempt: 3 }],
      ],
      [
        [
          'message.bounced',
          { status: 'Bounced', time: minute(30), remoteHost: '', bounce: 'hard' },
        ],
        ['message.delivered', { status: 'Delivered', time: minute(1) }],
        [
          'message.bounced',
          { status: 'Bounced', time: minute(31), remoteHost: '', bounce: 'hard' },
        ],
      ],
      [
        [
          'message.suppressed',
          { status: 'Suppressed', time: minute(0), remoteHost: '', reply: '' },
        ],
      ],
    ];

    /** The histories' events for the targets, interleaved across messages (fresh event ids). */
    function interleaved(targets: readonly EventTarget[]): DeliveryOutcomeEvent[] {
      const events: DeliveryOutcomeEvent[] = [];
      const longest = Math.max(...HISTORIES.map((history) => history.length));
      for (let step = 0; step < longest; step++) {
        targets.forEach((target, index) => {
          const spec = HISTORIES[index % HISTORIES.length]?.[step];
          if (spec) events.push(outcomeEvent(target, spec[0], spec[1]));
        });
      }
      return events;
    }

    /** What one-by-one gives: the same events (fresh ids) on twin messages, through apply(). */
    async function oneByOne(count: number): Promise<DeliveryRow[]> {
      const twins = await acceptedMany(count);
      for (const event of interleaved(twins)) await service.apply(toDeliveryOutcome(event));
      return rows(twins);
    }

    describe('one transaction per batch (the service, real PostgreSQL)', () => {
      it('leaves many messages as applying their events one by one would, out of order and with duplicates', async () => {
        const targets = await acceptedMany(10);
        const events = interleaved(targets);
        const unknown = outcomeEvent({ ...nth(targets, 0), id: UNKNOWN_ID }, 'message.delivered', {
          status: 'Delivered',
        });
        // A republished event twice, and an event of a message that does not exist, in the middle.
        const batch = [
          ...events.slice(0, 6),
          nth(events, 1),
          unknown,
          ...events.slice(6),
          nth(events, 7),
        ];

        const results = await service.applyBatch(batch.map((event) => toDeliveryOutcome(event)));

        expect(results).toEqual([
          ...events.slice(0, 6).map(() => 'applied'),
          'duplicate',
          'unknown_message',
          ...events.slice(6).map(() => 'applied'),
          'duplicate',
        ]);
        const batched = await rows(targets);
        expect(batched.map(fields)).toEqual((await oneByOne(10)).map(fields));
        expect(batched.map((row) => [row.status, row.num_attempts, row.processed_events])).toEqual([
          ['Delivered', 3, 3],
          ['Delivered', 2, 2],
          ['Failed', 3, 3],
          ['Bounced', 3, 3],
          ['Suppressed', 0, 1],
          ['Delivered', 3, 3],
          ['Delivered', 2, 2],
          ['Failed', 3, 3],
          ['Bounced', 3, 3],
          ['Suppressed', 0, 1],
        ]);
        expect(batched[1]?.delivery_attempts.map((attempt) => attempt.status)).toEqual([
          'Deferred',
          'Delivered',
        ]);
        // An asynchronous bounce keeps delivered_at.
        expect(batched[3]).toMatchObject({
          bounce_classification: 'hard',
          delivered_at: minute(1),
        });
      });

      it('skips the events an earlier batch applied', async () => {
        const target = nth(await acceptedMany(1), 0);
        const first = outcomeEvent(target, 'message.transient_error', {
          status: 'Deferred',
          time: minute(0),
        });
        const second = outcomeEvent(target, 'message.transient_error', {
          status: 'Deferred',
          time: minute(1),
        });
        const third = outcomeEvent(target, 'message.delivered', {
          status: 'Delivered',
          time: minute(2),
        });

        await service.applyBatch([first, second].map((event) => toDeliveryOutcome(event)));
        const results = await service.applyBatch(
          [second, third, first].map((event) => toDeliveryOutcome(event)),
        );

        expect(results).toEqual(['duplicate', 'applied', 'duplicate']);
        const [row] = await rows([target]);
        expect(row).toMatchObject({ status: 'Delivered', num_attempts: 3, processed_events: 3 });
        expect(row?.delivery_attempts).toHaveLength(3);
      });

      it('claims only the events of its messages and their account, under the message id as stored', async () => {
        // Data retention 0 and a final status: the batch takes the locking transaction.
        const [target, other] = await acceptedMany(2, { retention: { metadata: 3, data: 0 } });
        if (!target || !other) throw new Error('two messages were accepted');
        const strangerAccount = randomUUID();
        const shared = randomUUID();
        // The same event id first as another account's, then as the message's own (upper case).
        const batch = [
          outcomeEvent({ ...target, accountId: strangerAccount }, 'message.delivered', {
            status: 'Delivered',
            id: shared,
          }),
          outcomeEvent(
            { ...target, id: target.id.toUpperCase(), accountId: target.accountId.toUpperCase() },
            'message.delivered',
            { status: 'Delivered', id: shared },
          ),
          outcomeEvent({ ...other, accountId: strangerAccount }, 'message.delivered', {
            status: 'Delivered',
          }),
        ];

        const results = await service.applyBatch(batch.map((event) => toDeliveryOutcome(event)));

        expect(results).toEqual(['unknown_message', 'applied', 'unknown_message']);
        const claims = await app.dataSource.query<Array<{ record_id: string; type: string }>>(
          `SELECT record_id, type FROM messages.processed_events WHERE event_id = ANY($1)`,
          [batch.map((event) => event.id)],
        );
        expect(claims).toEqual([{ record_id: target.id, type: 'message.delivered' }]);
        const [delivered, untouched] = await rows([target, other]);
        expect(delivered).toMatchObject({ status: 'Delivered', processed_events: 1 });
        expect(untouched).toMatchObject({ status: 'Received', processed_events: 0 });
      });

      it('writes nothing without locks when a message was written since it was read, and the batch still applies once', async () => {
        const [target, other] = await acceptedMany(2);
        if (!target || !other) throw new Error('two messages were accepted');
        const states = app.app.get(DeliveryStatesRepository);
        const late = [
          outcomeEvent(target, 'message.delivered', { status: 'Delivered', time: minute(2) }),
          outcomeEvent(other, 'message.delivered', { status: 'Delivered', time: minute(2) }),
        ].map((event) => toDeliveryOutcome(event));
        const read = await states.readBatch(late);
        // Written in between: the target's deferral, applied by another batch.
        await service.applyBatch([
          toDeliveryOutcome(
            outcomeEvent(target, 'message.transient_error', {
              status: 'Deferred',
              time: minute(1),
            }),
          ),
        ]);
        const stale = read.messages.map((message) => ({
          id: message.id,
          state: { ...message.state, status: 'Delivered' as const },
        }));
        const claims = late.map((outcome) => ({
          eventId: outcome.eventId,
          messageId: outcome.messageId,
          type: outcome.type,
        }));

        await expect(
          states.writeIfUnchanged(stale, read.versions, claims, new Date()),
        ).resolves.toBe(false);
        expect((await rows([target, other])).map((row) => row.processed_events)).toEqual([1, 0]);
        expect(await rows([target, other])).toMatchObject([
          { status: 'Deferred' },
          { status: 'Received' },
        ]);

        await expect(service.applyBatch(late)).resolves.toEqual(['applied', 'applied']);
        await expect(service.applyBatch(late)).resolves.toEqual(['duplicate', 'duplicate']);
        expect(await rows([target, other])).toMatchObject([
          { status: 'Delivered', num_attempts: 2, processed_events: 2 },
          { status: 'Delivered', num_attempts: 1, processed_events: 1 },
        ]);
      });

      it('writes nothing without locks when a message is written while the write waits for its lock', async () => {
        const target = nth(await acceptedMany(1), 0);
        const states = app.app.get(DeliveryStatesRepository);
        const outcome = toDeliveryOutcome(
          outcomeEvent(target, 'message.delivered', { status: 'Delivered', time: minute(2) }),
        );
        const read = await states.readBatch([outcome]);
        const other = app.dataSource.createQueryRunner();
        await other.connect();
        try {
          await other.startTransaction();
          await other.query(`UPDATE messages.messages SET updated_at = now() WHERE id = $1`, [
            target.id,
          ]);
          const write = states.writeIfUnchanged(
            read.messages.map((message) => ({
              id: message.id,
              state: { ...message.state, status: 'Delivered' as const },
            })),
            read.versions,
            [{ eventId: outcome.eventId, messageId: target.id, type: outcome.type }],
            new Date(),
          );
          await pollUntil(
            () =>
              app.dataSource.query<Array<{ count: number }>>(
                `SELECT count(*)::int AS count FROM pg_stat_activity
                 WHERE wait_event_type = 'Lock' AND query LIKE '%WITH unchanged AS%'`,
              ),
            ([waiting]) => (waiting?.count ?? 0) > 0,
            { timeoutMs: 10_000, what: 'the write waiting for the lock' },
          );
          await other.commitTransaction();

          await expect(write).resolves.toBe(false);
        } finally {
          if (other.isTransactionActive) await other.rollbackTransaction();
          await other.release();
        }
        expect(await rows([target])).toMatchObject([{ status: 'Received', processed_events: 0 }]);
      });

      it('commits two batches over the same messages at once, each event once, without deadlock', async () => {
        const targets = await acceptedMany(8);
        const deferrals = targets.map((target) =>
          outcomeEvent(target, 'message.transient_error', { status: 'Deferred', time: minute(0) }),
        );
        const deliveries = [...targets]
          .reverse()
          .map((target) =>
            outcomeEvent(target, 'message.delivered', { status: 'Delivered', time: minute(1) }),
          );

        const [one, two] = await Promise.all([
          service.applyBatch(
            [...deferrals, ...deliveries].map((event) => toDeliveryOutcome(event)),
          ),
          service.applyBatch(
            [...deliveries, ...deferrals].map((event) => toDeliveryOutcome(event)),
          ),
        ]);

        // Whichever committed first applied all sixteen; the other found them applied.
        expect([...(one ?? []), ...(two ?? [])].sort()).toEqual([
          ...Array<string>(16).fill('applied'),
          ...Array<string>(16).fill('duplicate'),
        ]);
        for (const row of await rows(targets)) {
          expect(row).toMatchObject({ status: 'Delivered', num_attempts: 2, processed_events: 2 });
        }
      });

      it('empties the content at data retention 0 once a batch ends its delivery', async () => {
        const retained = await acceptedMany(2, { retention: { metadata: 3, data: 0 } });
        const [waiting, done] = [nth(retained, 0), nth(retained, 1)];
        const content = async (target: EventTarget) => {
          return (await storedRaw(app, target.id)) === null;
        };

        await service.applyBatch(
          [
            outcomeEvent(waiting, 'message.transient_error', {
              status: 'Deferred',
              time: minute(0),
            }),
            outcomeEvent(done, 'message.transient_error', { status: 'Deferred', time: minute(0) }),
            outcomeEvent(done, 'message.delivered', { status: 'Delivered', time: minute(1) }),
          ].map((event) => toDeliveryOutcome(event)),
        );

        await expect(content(waiting)).resolves.toBe(false);
        await expect(content(done)).resolves.toBe(true);
      });
    });

    describe('through the EVENTS stream', () => {
      /** Publishes every event at once; answers the highest stream sequence of each type. */
      async function publishAll(
        events: ReadonlyArray<Published | { event: Published; msgId: string }>,
      ): Promise<Map<DeliveryOutcomeEvent['type'], number>> {
        const published = await Promise.all(
          events.map(async (entry) => {
            const [event, msgId] =
              'event' in entry ? [entry.event, entry.msgId] : [entry, entry.id];
            return [event.type, await publishOutcome(app, event, msgId)] as const;
          }),
        );
        const last = new Map<DeliveryOutcomeEvent['type'], number>();
        for (const [type, seq] of published) last.set(type, Math.max(last.get(type) ?? 0, seq));
        return last;
      }

      async function handledAll(last: Map<DeliveryOutcomeEvent['type'], number>): Promise<void> {
        for (const [type, seq] of last) await handledUpTo(app, type, seq);
      }

      it('applies many events for many messages published at once, duplicates and disorder included', async () => {
        const targets = await acceptedMany(20);
        const events = interleaved(targets);
        // Republications the stream cannot recognise (new Nats-Msg-Id): the event id still can.
        const republished = events
          .filter((_, index) => index % 4 === 0)
          .map((event) => ({ event, msgId: randomUUID() }));

        await handledAll(await publishAll([...[...events].reverse(), ...republished]));

        const applied = await rows(targets);
        expect(applied.map(fields)).toEqual((await oneByOne(20)).map(fields));
        expect(applied.map((row) => row.status)).toEqual(
          targets.map(
            (_, index) => ['Delivered', 'Delivered', 'Failed', 'Bounced', 'Suppressed'][index % 5],
          ),
        );
      });

      it('lets a poison event in the middle of a batch cost only itself', async () => {
        const targets = await acceptedMany(11);
        const poisoned = nth(targets, 5);
        const events = targets.map((target) =>
          outcomeEvent(target, 'message.transient_error', {
            status: 'Deferred',
            time: minute(0),
            // Control characters are stored as spaces (PostgreSQL text takes no NUL).
            ...(target === nth(targets, 2) ? { reply: '451 \u0000 try later' } : {}),
          }),
        );
        const malformed = { id: randomUUID(), type: 'message.transient_error' as const, data: {} };
        const healthy = targets.filter((target) => target !== poisoned);
        // The poisoned message cannot be updated at all: no retry helps its event.
        await app.dataSource.query(
          `CREATE FUNCTION messages.test_poison() RETURNS trigger LANGUAGE plpgsql AS $$
           BEGIN
             IF NEW.id = '${poisoned.id}' THEN RAISE EXCEPTION 'poisoned for the test'; END IF;
             RETURN NEW;
           END $$`,
        );
        await app.dataSource.query(
          `CREATE TRIGGER test_poison BEFORE UPDATE ON messages.messages
           FOR EACH ROW EXECUTE FUNCTION messages.test_poison()`,
        );
        try {
          const last = await publishAll([...events.slice(0, 3), malformed, ...events.slice(3)]);

          await pollUntil(
            () => rows(healthy),
            (found) =>
              found.every((row) => row.status === 'Deferred' && row.processed_events === 1),
            { what: 'the ten healthy events applied' },
          );
          const [stuck] = await rows([poisoned]);
          expect(stuck).toMatchObject({ status: 'Received', processed_events: 0 });
          const [withNul] = await app.dataSource.query<Array<{ log: string }>>(
            `SELECT delivery_attempts->0->>'log' AS log FROM messages.messages WHERE id = $1`,
            [nth(targets, 2).id],
          );
          expect(withNul?.log).toContain('451   try later');

          // Once its message is gone (metadata retention), the poison event is dropped as unknown.
          await app.dataSource.query('DELETE FROM messages.messages WHERE id = $1', [poisoned.id]);
          await handledAll(last);
          for (const row of await rows(healthy)) {
            expect(row).toMatchObject({ status: 'Deferred', num_attempts: 1, processed_events: 1 });
          }
        } finally {
          await app.dataSource.query('DROP TRIGGER IF EXISTS test_poison ON messages.messages');
          await app.dataSource.query('DROP FUNCTION IF EXISTS messages.test_poison()');
        }
      });
    });
  });
}
