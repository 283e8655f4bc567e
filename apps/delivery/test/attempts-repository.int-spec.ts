import { randomUUID } from 'node:crypto';

import { DeliveryStreamSubjects, type MessageDeliveredEvent } from '@envoi/contracts-delivery';
import { MessagesStreamSubjects } from '@envoi/contracts-messages';
import { outboxEntry } from '@envoi/shared-outbox';
import { DataSource } from 'typeorm';

import {
  type AttemptClaim,
  AttemptsRepository,
  type OutcomeRecord,
} from '../src/attempts/attempts.repository';
import { deliveryDataSourceOptions } from '../src/database/data-source-options';
import { runDeliveryMigrations } from '../src/database/run-delivery-migrations';

/**
 * The attempts table's compare-and-set statements against the real delivery schema: whoever
 * holds the claim (or takes over an abandoned one) records the outcome, nobody else.
 */

const ACCOUNT_ID = '0190aaaa-0000-7000-8000-0000000000a1';
const MINUTE_MS = 60_000;

function record(
  finishedAt: Date,
  recipients: Array<{ email: string; result: 'delivered' | 'bounced' | 'transient_error' }>,
): OutcomeRecord {
  return {
    outcome: {
      kind: 'delivered',
      status: 'Delivered',
      remoteHost: `mx.example.test${'.x'.repeat(200)}`,
      reply: '250 ok',
      recipients: recipients.map((recipient) => ({ ...recipient, remote_host: '', reply: '' })),
    },
    finishedAt,
    tls: true,
    nextAttemptAt: null,
    entries: [],
  };
}

/** The first attempt of the message, recorded without a claim. */
function unclaimedWrite(messageId: string, outcome: OutcomeRecord) {
  return {
    kind: 'unclaimed' as const,
    messageId,
    accountId: ACCOUNT_ID,
    attempt: 1,
    sandbox: false,
    record: outcome,
  };
}

/** A `message.outcome_batch` row's payload, as far as the tests read it. */
interface BatchPayload {
  id: string;
  type: string;
  data: { events: Array<{ id: string }> };
}

/** A delivered event of the message (the outbox stores it as given). */
function outcomeEvent(id: string, messageId: string): MessageDeliveredEvent {
  const time = new Date().toISOString();
  return {
    id,
    type: 'message.delivered',
    timestamp: time,
    data: {
      account_id: ACCOUNT_ID,
      event: 'on_delivered',
      from: 'sender@example.test',
      recipient: 'rcpt@example.net',
      subject: 'Quotes " and ünïcode',
      message_id_header: `<${messageId}@example.test>`,
      id: messageId,
      is_bot: false,
      status: 'Delivered',
      attempt: {
        time,
        remote_host: 'mx.example.net',
        reply: '250 ok',
        status: 'Delivered',
        attempt: 1,
      },
      sandbox: false,
      recipients: [
        {
          email: 'rcpt@example.net',
          result: 'delivered',
          remote_host: 'mx.example.net',
          reply: '250 ok',
        },
      ],
    },
  };
}

describe('AttemptsRepository against PostgreSQL', () => {
  let dataSource: DataSource | undefined;
  let attempts: AttemptsRepository;

  beforeAll(async () => {
    const url = process.env['DATABASE_URL'] ?? '';
    await runDeliveryMigrations(url);
    dataSource = new DataSource(deliveryDataSourceOptions(url, 4));
    await dataSource.initialize();
    attempts = new AttemptsRepository(dataSource);
  }, 60_000);

  afterAll(async () => {
    await dataSource?.destroy();
  });

  async function claimOf(messageId: string, attempt: number, leaseUntil: Date) {
    const claim = await attempts.claim(messageId, ACCOUNT_ID, attempt, leaseUntil, new Date());
    if (!claim) throw new Error('expected a claim');
    return claim;
  }

  /**
   * Attempts of four new messages: one claimed, one claimed under a token about to be forged
   * (lost), one not claimed, one claimed by another worker (existing).
   */
  async function fourAttempts() {
    const leaseUntil = new Date(Date.now() + MINUTE_MS);
    const [heldMessage, lostMessage, newMessage, existingMessage] = [1, 2, 3, 4].map(() =>
      randomUUID(),
    );
    const held = await claimOf(heldMessage, 1, leaseUntil);
    const lost = await claimOf(lostMessage, 1, leaseUntil);
    await claimOf(existingMessage, 1, leaseUntil);
    return { heldMessage, lostMessage, newMessage, existingMessage, held, lost };
  }

  it('lets exactly one of concurrent claims of an attempt win', async () => {
    const messageId = randomUUID();
    const leaseUntil = new Date(Date.now() + MINUTE_MS);

    const claims = await Promise.all(
      Array.from({ length: 8 }, () =>
        attempts.claim(messageId, ACCOUNT_ID, 1, leaseUntil, new Date()),
      ),
    );

    expect(claims.filter((claim) => claim !== null)).toHaveLength(1);
    await expect(attempts.find(messageId, 1)).resolves.toMatchObject({
      messageId,
      accountId: ACCOUNT_ID,
      attempt: 1,
      state: 'in_progress',
      leaseUntil,
      remoteHost: '',
    });
    await expect(attempts.find(messageId, 2)).resolves.toBeNull();
  });

  it('finds each (message, attempt) asked for in one query, null for those without a row', async () => {
    const leaseUntil = new Date(Date.now() + MINUTE_MS);
    const [first, second] = [randomUUID(), randomUUID()];
    const firstClaim = await claimOf(first, 1, leaseUntil);
    const secondClaim = await claimOf(second, 2, leaseUntil);

    const rows = await attempts.findPairs([
      { messageId: second, attempt: 2 },
      { messageId: first, attempt: 2 },
      { messageId: first, attempt: 1 },
      { messageId: second, attempt: 2 },
    ]);

    expect(rows.map((row) => row?.id ?? null)).toEqual([
      secondClaim.id,
      null,
      firstClaim.id,
      secondClaim.id,
    ]);
  });

  it('claims many attempts in one statement, none held elsewhere or given twice', async () => {
    const leaseUntil = new Date(Date.now() + MINUTE_MS);
    const [free, held] = [randomUUID(), randomUUID()];
    await claimOf(held, 1, leaseUntil);
    const key = (messageId: string) => ({
      messageId,
      accountId: ACCOUNT_ID,
      attempt: 1,
      startedAt: new Date(),
    });

    const claims = await attempts.claimEach([key(free), key(held), key(free)], leaseUntil);

    expect(claims.map((claim) => claim !== null)).toEqual([true, false, false]);
    await expect(attempts.find(free, 1)).resolves.toMatchObject({
      id: claims[0]?.id,
      state: 'in_progress',
      leaseUntil,
    });
    await expect(attempts.claimEach([], leaseUntil)).resolves.toEqual([]);
  });

  it('records an outcome only under the claim token, once', async () => {
    const messageId = randomUUID();
    const claim = await claimOf(messageId, 1, new Date(Date.now() + MINUTE_MS));
    const finished = record(new Date(), [{ email: 'a@r.test', result: 'delivered' }]);
    const forged: AttemptClaim = { id: claim.id, token: randomUUID() };

    await expect(attempts.finish(forged, finished)).resolves.toBe(false);
    await expect(attempts.finish(claim, finished)).resolves.toBe(true);
    await expect(attempts.finish(claim, finished)).resolves.toBe(false);
    const row = await attempts.find(messageId, 1);
    expect(row).toMatchObject({ state: 'done', leaseUntil: null });
    expect(row?.remoteHost).toHaveLength(255);
  });

  it('releases only an unfinished claim under its token', async () => {
    const messageId = randomUUID();
    const leaseUntil = new Date(Date.now() + MINUTE_MS);
    const claim = await claimOf(messageId, 1, leaseUntil);

    await attempts.release({ id: claim.id, token: randomUUID() });
    await expect(attempts.find(messageId, 1)).resolves.not.toBeNull();
    await attempts.release(claim);
    await expect(attempts.find(messageId, 1)).resolves.toBeNull();

    const again = await claimOf(messageId, 1, leaseUntil);
    await attempts.finish(again, record(new Date(), []));
    await attempts.release(again);
    await expect(attempts.find(messageId, 1)).resolves.toMatchObject({ state: 'done' });
  });

  it('takes over an attempt only once its lease has run out, and only once', async () => {
    const messageId = randomUUID();
    const leaseUntil = new Date(Date.now() + MINUTE_MS);
    const claim = await claimOf(messageId, 1, leaseUntil);
    const row = await attempts.find(messageId, 1);
    if (!row) throw new Error('expected the attempt');
    const outcome = record(new Date(), []);

    await expect(attempts.takeOver(row, new Date(), outcome)).resolves.toBe(false);
    const afterLease = new Date(leaseUntil.getTime() + 1);
    await expect(attempts.takeOver(row, afterLease, outcome)).resolves.toBe(true);
    await expect(attempts.takeOver(row, afterLease, outcome)).resolves.toBe(false);
    await expect(attempts.finish(claim, outcome)).resolves.toBe(false);
  });

  it('renews the claims still held in one statement, and not those taken over', async () => {
    const leaseUntil = new Date(Date.now() + MINUTE_MS);
    const held = await claimOf(randomUUID(), 1, leaseUntil);
    const other = await claimOf(randomUUID(), 1, leaseUntil);
    const takenMessage = randomUUID();
    const taken = await claimOf(takenMessage, 1, new Date(Date.now() - 1));
    const takenRow = await attempts.find(takenMessage, 1);
    if (!takenRow) throw new Error('expected the attempt');
    await attempts.takeOver(takenRow, new Date(), record(new Date(), []));

    const later = new Date(Date.now() + 2 * MINUTE_MS);
    const renewed = await attempts.renew(
      [held, { id: other.id, token: randomUUID() }, taken],
      later,
    );
    expect([...renewed]).toEqual([held.id]);
    const rows = await dataSource?.query<Array<{ id: string; lease_until: Date }>>(
      'SELECT id, lease_until FROM delivery.attempts WHERE id = ANY($1::uuid[])',
      [[held.id, other.id]],
    );
    const leaseOf = (id: string) => rows?.find((row) => row.id === id)?.lease_until.getTime();
    expect(leaseOf(held.id)).toBe(later.getTime());
    expect(leaseOf(other.id)).toBe(leaseUntil.getTime());
    await expect(attempts.renew([], later)).resolves.toEqual(new Set());
  });

  it('records an attempt without sending once, never over an existing one', async () => {
    const messageId = randomUUID();
    const outcome = record(new Date(), [{ email: 'a@r.test', result: 'bounced' }]);

    await expect(
      attempts.recordWithoutSending(messageId, ACCOUNT_ID, 1, true, outcome),
    ).resolves.toBe(true);
    await expect(
      attempts.recordWithoutSending(messageId, ACCOUNT_ID, 1, true, outcome),
    ).resolves.toBe(false);
    await claimOf(messageId, 2, new Date(Date.now() + MINUTE_MS));
    await expect(
      attempts.recordWithoutSending(messageId, ACCOUNT_ID, 2, false, outcome),
    ).resolves.toBe(false);
    await expect(attempts.find(messageId, 1)).resolves.toMatchObject({ state: 'done' });
    await expect(attempts.find(messageId, 2)).resolves.toMatchObject({ state: 'in_progress' });
  });

  it('records many outcomes at once, each only under its own claim or where none exists', async () => {
    const { heldMessage, lostMessage, newMessage, existingMessage, held, lost } =
      await fourAttempts();
    const delivered = record(new Date(), [
      { email: 'a@r.test', result: 'delivered' },
      { email: 'b@r.test', result: 'delivered' },
      { email: 'c@r.test', result: 'bounced' },
    ]);
    const unclaimed = (messageId: string) => ({
      kind: 'unclaimed' as const,
      messageId,
      accountId: ACCOUNT_ID,
      attempt: 1,
      sandbox: true,
      record: delivered,
    });

    const written = await attempts.recordEach([
      { kind: 'claimed', claim: held, record: delivered },
      { kind: 'claimed', claim: { id: lost.id, token: randomUUID() }, record: delivered },
      unclaimed(newMessage),
      unclaimed(existingMessage),
    ]);

    expect(written).toEqual([true, false, true, false]);
    const rows = await dataSource?.query<
      Array<{
        message_id: string;
        state: string;
        claim_token: string | null;
        delivered_to: string[];
        bounced_to: string[];
        remote_host: string;
      }>
    >(
      `SELECT message_id, state, claim_token, delivered_to, bounced_to, remote_host
         FROM delivery.attempts WHERE message_id = ANY($1::uuid[])`,
      [[heldMessage, lostMessage, newMessage, existingMessage]],
    );
    const rowOf = (messageId: string) => rows?.find((row) => row.message_id === messageId);
    for (const messageId of [heldMessage, newMessage]) {
      expect(rowOf(messageId)).toMatchObject({
        state: 'done',
        claim_token: null,
        delivered_to: ['a@r.test', 'b@r.test'],
        bounced_to: ['c@r.test'],
      });
      expect(rowOf(messageId)?.remote_host).toHaveLength(255);
    }
    expect(rowOf(lostMessage)).toMatchObject({ state: 'in_progress', claim_token: lost.token });
    expect(rowOf(existingMessage)).toMatchObject({ state: 'in_progress' });
    await expect(attempts.recordEach([])).resolves.toEqual([]);
  });

  it('queues the outbox rows of the outcomes it wrote, in order, and no other', async () => {
    const { heldMessage, lostMessage, newMessage, existingMessage, held, lost } =
      await fourAttempts();
    const withRows = (messageId: string, count: number): OutcomeRecord => ({
      ...record(new Date(), []),
      entries: Array.from({ length: count }, (_, index) =>
        outboxEntry(MessagesStreamSubjects.deliveryJobs, randomUUID(), {
          message_id: messageId,
          account_id: ACCOUNT_ID,
          attempt: index + 2,
        }),
      ),
    });
    const unclaimed = (messageId: string) => unclaimedWrite(messageId, withRows(messageId, 1));
    const writes = [
      { kind: 'claimed' as const, claim: held, record: withRows(heldMessage, 2) },
      {
        kind: 'claimed' as const,
        claim: { id: lost.id, token: randomUUID() },
        record: withRows(lostMessage, 1),
      },
      unclaimed(newMessage),
      unclaimed(existingMessage),
    ];

    await expect(attempts.recordWithOutbox(writes)).resolves.toEqual([true, false, true, false]);

    const queued = await dataSource?.query<Array<{ id: string }>>(
      `SELECT id FROM delivery.outbox WHERE id = ANY($1::uuid[]) ORDER BY seq`,
      [writes.flatMap((write) => write.record.entries.map((entry) => entry.id))],
    );
    expect(queued?.map((row) => row.id)).toEqual(
      [writes[0], writes[2]].flatMap((write) => write?.record.entries.map((entry) => entry.id)),
    );
    await expect(attempts.find(heldMessage, 1)).resolves.toMatchObject({ state: 'done' });
    await expect(attempts.find(newMessage, 1)).resolves.toMatchObject({ state: 'done' });
    await expect(attempts.find(lostMessage, 1)).resolves.toMatchObject({ state: 'in_progress' });
    await expect(attempts.recordWithOutbox([])).resolves.toEqual([]);
  });

  it('puts the events of the outcomes it wrote in one message.outcome_batch row, in order, and their jobs in rows of their own', async () => {
    const { heldMessage, lostMessage, newMessage, existingMessage, held, lost } =
      await fourAttempts();
    const withEvent = (messageId: string): OutcomeRecord => {
      const eventId = randomUUID();
      const job = outboxEntry(MessagesStreamSubjects.deliveryJobs, randomUUID(), {
        message_id: messageId,
        account_id: ACCOUNT_ID,
        attempt: 2,
      });
      const event = outboxEntry(
        DeliveryStreamSubjects.delivered,
        eventId,
        outcomeEvent(eventId, messageId),
      );
      return { ...record(new Date(), []), entries: [event, job] };
    };
    const unclaimed = (messageId: string) => unclaimedWrite(messageId, withEvent(messageId));
    const writes = [
      unclaimed(newMessage),
      {
        kind: 'claimed' as const,
        claim: { id: lost.id, token: randomUUID() },
        record: withEvent(lostMessage),
      },
      { kind: 'claimed' as const, claim: held, record: withEvent(heldMessage) },
      unclaimed(existingMessage),
    ];
    const [eventsOf, jobsOf] = [0, 1].map(
      (position) => (indexes: number[]) =>
        indexes.map((index) => writes[index]?.record.entries[position]?.id),
    );

    await expect(attempts.recordWithOutbox(writes)).resolves.toEqual([true, false, true, false]);

    const batches = await dataSource?.query<
      Array<{ id: string; subject: string; payload: BatchPayload }>
    >(
      `SELECT id, subject, payload FROM delivery.outbox
        WHERE payload->'data'->'events' @> ANY(
          SELECT jsonb_build_array(jsonb_build_object('id', event_id))
            FROM unnest($1::text[]) AS event_id)`,
      [eventsOf?.([0, 1, 2, 3])],
    );
    expect(batches).toHaveLength(1);
    const [batch] = batches ?? [];
    expect(batch?.subject).toBe('events.message.outcome_batch.v1');
    expect(batch?.payload).toMatchObject({ id: batch?.id, type: 'message.outcome_batch' });
    expect(batch?.payload.data.events.map((event) => event.id)).toEqual(eventsOf?.([0, 2]));
    expect(batch?.payload.data.events[0]).toEqual(writes[0]?.record.entries[0]?.payload);
    const jobs = await dataSource?.query<Array<{ id: string }>>(
      `SELECT id FROM delivery.outbox WHERE id = ANY($1::uuid[]) ORDER BY seq`,
      [jobsOf?.([0, 1, 2, 3])],
    );
    expect(jobs?.map((row) => row.id)).toEqual(jobsOf?.([0, 2]));
  });

  it('claims and records in one statement: new claims, outcomes under their claims, their outbox rows', async () => {
    const leaseUntil = new Date(Date.now() + MINUTE_MS);
    const [free, held, finished, lostMessage] = [
      randomUUID(),
      randomUUID(),
      randomUUID(),
      randomUUID(),
    ];
    await claimOf(held, 1, leaseUntil);
    const finishedClaim = await claimOf(finished, 1, leaseUntil);
    const lost = await claimOf(lostMessage, 1, leaseUntil);
    const key = (messageId: string) => ({
      messageId,
      accountId: ACCOUNT_ID,
      attempt: 1,
      startedAt: new Date(),
    });
    const event = outboxEntry(MessagesStreamSubjects.deliveryJobs, randomUUID(), {
      message_id: finished,
      account_id: ACCOUNT_ID,
      attempt: 2,
    });
    const lostEvent = outboxEntry(MessagesStreamSubjects.deliveryJobs, randomUUID(), {
      message_id: lostMessage,
      account_id: ACCOUNT_ID,
      attempt: 2,
    });

    const { claims, written } = await attempts.claimAndRecord([key(free), key(held)], leaseUntil, [
      {
        kind: 'claimed',
        claim: finishedClaim,
        record: { ...record(new Date(), []), entries: [event] },
      },
      {
        kind: 'claimed',
        claim: { id: lost.id, token: randomUUID() },
        record: { ...record(new Date(), []), entries: [lostEvent] },
      },
    ]);

    expect(claims.map((claim) => claim !== null)).toEqual([true, false]);
    expect(written).toEqual([true, false]);
    await expect(attempts.find(free, 1)).resolves.toMatchObject({
      id: claims[0]?.id,
      state: 'in_progress',
      leaseUntil,
    });
    await expect(attempts.find(finished, 1)).resolves.toMatchObject({ state: 'done' });
    await expect(attempts.find(lostMessage, 1)).resolves.toMatchObject({ state: 'in_progress' });
    const queued = await dataSource?.query<Array<{ id: string }>>(
      `SELECT id FROM delivery.outbox WHERE id = ANY($1::uuid[])`,
      [[event.id, lostEvent.id]],
    );
    expect(queued?.map((row) => row.id)).toEqual([event.id]);
    await expect(attempts.claimAndRecord([], leaseUntil, [])).resolves.toEqual({
      claims: [],
      written: [],
    });
  });

  it('writes nothing when the transaction it runs in fails afterwards', async () => {
    const messageId = randomUUID();
    const outcome = record(new Date(), []);

    await expect(
      dataSource?.transaction(async (manager) => {
        await attempts.recordWithoutSending(messageId, ACCOUNT_ID, 1, false, outcome, manager);
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');

    await expect(attempts.find(messageId, 1)).resolves.toBeNull();
  });

  it('answers the recipients earlier attempts settled and when the first one started', async () => {
    const messageId = randomUUID();
    const firstStart = new Date('2020-01-01T00:00:00.000Z');
    await attempts.claim(messageId, ACCOUNT_ID, 1, new Date(Date.now() + MINUTE_MS), firstStart);
    const first = await attempts.find(messageId, 1);
    if (!first) throw new Error('expected the attempt');
    await attempts.takeOver(
      first,
      new Date(Date.now() + 2 * MINUTE_MS),
      record(new Date(), [
        { email: 'a@r.test', result: 'delivered' },
        { email: 'b@r.test', result: 'bounced' },
        { email: 'c@r.test', result: 'transient_error' },
      ]),
    );
    await attempts.recordWithoutSending(
      messageId,
      ACCOUNT_ID,
      2,
      false,
      record(new Date(), [{ email: 'c@r.test', result: 'delivered' }]),
    );

    await expect(attempts.settledBefore(messageId, 1)).resolves.toEqual({
      delivered: new Set(),
      bounced: new Set(),
    });
    await expect(attempts.settledBefore(messageId, 2)).resolves.toEqual({
      delivered: new Set(['a@r.test']),
      bounced: new Set(['b@r.test']),
    });
    await expect(attempts.settledBefore(messageId, 3)).resolves.toEqual({
      delivered: new Set(['a@r.test', 'c@r.test']),
      bounced: new Set(['b@r.test']),
    });
    await expect(attempts.firstAttemptStart(messageId)).resolves.toEqual(firstStart);
    await expect(attempts.firstAttemptStart(randomUUID())).resolves.toBeNull();
  });
});
