import { randomUUID } from 'node:crypto';

import { type DeliveryOutcomeBatchEvent, DeliveryStreamSubjects } from '@envoi/contracts-delivery';
import { preparedQuery } from '@envoi/shared-database';
import { enqueueOutboxStatement, type OutboxEntry } from '@envoi/shared-outbox';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';

import type { AttemptOutcome } from '../worker/outcomes';
import type { AttemptState } from './delivery-attempt.entity';
import { type OutboxRowsOfAttempts, outcomeBatchRows } from './outcome-batches';

/** What recording an outcome writes besides the attempt row: the event, maybe the next job. */
export interface OutcomeRecord {
  outcome: AttemptOutcome;
  /** When the attempt started, when it was never claimed (default: finishedAt). */
  startedAt?: Date;
  finishedAt: Date;
  tls: boolean | null;
  nextAttemptAt: Date | null;
  entries: OutboxEntry[];
}

/** An outcome to record: of a claimed attempt (under its claim), or of an unclaimed one. */
export type OutcomeWrite = ClaimedOutcome | UnclaimedOutcome;

export interface ClaimedOutcome {
  kind: 'claimed';
  claim: AttemptClaim;
  record: OutcomeRecord;
}

/** An attempt that was never claimed: it needed no network I/O, or no session opened. */
export interface UnclaimedOutcome {
  kind: 'unclaimed';
  messageId: string;
  accountId: string;
  attempt: number;
  sandbox: boolean;
  record: OutcomeRecord;
}

/** The recipients earlier attempts settled: a retry sends to the others only. */
export interface SettledRecipients {
  delivered: ReadonlySet<string>;
  bounced: ReadonlySet<string>;
}

/** What a worker reads of an existing attempt before it decides. */
export interface AttemptRow {
  id: string;
  messageId: string;
  accountId: string;
  attempt: number;
  state: AttemptState;
  leaseUntil: Date | null;
  remoteHost: string;
}

const ATTEMPT_ROW_COLUMNS = `id, message_id AS "messageId", account_id AS "accountId", attempt,
  state, lease_until AS "leaseUntil", remote_host AS "remoteHost"`;

/** Which attempt of which message a claim is for, and when the attempt started. */
export interface ClaimKey {
  messageId: string;
  accountId: string;
  attempt: number;
  startedAt: Date;
}

/** A claim of an attempt: the row and the token its outcome must be recorded under. */
export interface AttemptClaim {
  id: string;
  token: string;
}

/**
 * The attempts table's statements, in plain SQL and prepared (each runs for every message or
 * batch of messages: no query builder, and PostgreSQL plans each once per connection). Each claim
 * and outcome is one compare-and-set, so two workers holding the same job never both record (or
 * both send, once a claim is held). An outcome's writes run in the caller's transaction, or in
 * one statement with its outbox rows.
 */
@Injectable()
export class AttemptsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async find(messageId: string, attempt: number): Promise<AttemptRow | null> {
    const rows = await preparedQuery<AttemptRow>(
      this.dataSource.manager,
      `SELECT ${ATTEMPT_ROW_COLUMNS}
         FROM delivery.attempts WHERE message_id = $1 AND attempt = $2`,
      [messageId, attempt],
    );
    return rows[0] ?? null;
  }

  /** Each (message, attempt) asked for, or null when it has no row, in one query. */
  async findPairs(
    keys: ReadonlyArray<{ messageId: string; attempt: number }>,
  ): Promise<Array<AttemptRow | null>> {
    const rows = await preparedQuery<AttemptRow>(
      this.dataSource.manager,
      `SELECT ${ATTEMPT_ROW_COLUMNS}
         FROM delivery.attempts
        WHERE (message_id, attempt) IN (SELECT * FROM unnest($1::uuid[], $2::int[]))`,
      [keys.map((key) => key.messageId), keys.map((key) => key.attempt)],
    );
    const byKey = new Map(rows.map((row) => [`${row.messageId}#${row.attempt}`, row]));
    return keys.map((key) => byKey.get(`${key.messageId}#${key.attempt}`) ?? null);
  }

  /** The given attempt of each message that has one, by message id, in one query. */
  async findEach(messageIds: readonly string[], attempt: number): Promise<Map<string, AttemptRow>> {
    const rows = await preparedQuery<AttemptRow>(
      this.dataSource.manager,
      `SELECT ${ATTEMPT_ROW_COLUMNS}
         FROM delivery.attempts WHERE message_id = ANY($1::uuid[]) AND attempt = $2`,
      [messageIds, attempt],
    );
    return new Map(rows.map((row) => [row.messageId, row]));
  }

  /** Recipients that accepted the message, or refused it for good, in earlier attempts. */
  async settledBefore(messageId: string, attempt: number): Promise<SettledRecipients> {
    const rows = await preparedQuery<{ delivered: string[] | null; bounced: string[] | null }>(
      this.dataSource.manager,
      `SELECT ARRAY(SELECT unnest(delivered_to) FROM delivery.attempts
                     WHERE message_id = $1 AND attempt < $2) AS delivered,
              ARRAY(SELECT unnest(bounced_to) FROM delivery.attempts
                     WHERE message_id = $1 AND attempt < $2) AS bounced`,
      [messageId, attempt],
    );
    return {
      delivered: new Set(rows[0]?.delivered ?? []),
      bounced: new Set(rows[0]?.bounced ?? []),
    };
  }

  /** When the message's first attempt started (null when none was recorded). */
  async firstAttemptStart(messageId: string): Promise<Date | null> {
    const rows = await preparedQuery<{ started_at: Date | null }>(
      this.dataSource.manager,
      'SELECT min(started_at) AS started_at FROM delivery.attempts WHERE message_id = $1',
      [messageId],
    );
    return rows[0]?.started_at ?? null;
  }

  /** Claims the attempt before any network I/O; null when another worker holds or did it. */
  async claim(
    messageId: string,
    accountId: string,
    attempt: number,
    leaseUntil: Date,
    startedAt: Date,
  ): Promise<AttemptClaim | null> {
    const [claim] = await this.claimEach(
      [{ messageId, accountId, attempt, startedAt }],
      leaseUntil,
    );
    return claim ?? null;
  }

  /**
   * Claims many attempts in one statement, each until `leaseUntil`: each one's claim, in order,
   * or null when another worker holds or did it (or it is given twice).
   */
  async claimEach(
    keys: readonly ClaimKey[],
    leaseUntil: Date,
  ): Promise<Array<AttemptClaim | null>> {
    if (keys.length === 0) return [];
    const claims = keys.map(newClaim);
    const statement = claimInsert(keys, claims, leaseUntil, 1);
    const rows = await preparedQuery<{ id: string }>(
      this.dataSource.manager,
      statement.sql,
      statement.parameters,
    );
    const inserted = new Set(rows.map((row) => row.id));
    return claims.map((claim) => (inserted.has(claim.id) ? claim : null));
  }

  /**
   * Claims attempts as claimEach does and records outcomes as recordWithOutbox does, in one
   * statement (atomic on its own): a worker's claims and outcomes of the same moment share one
   * round trip and one commit.
   */
  async claimAndRecord(
    keys: readonly ClaimKey[],
    leaseUntil: Date,
    writes: readonly OutcomeWrite[],
  ): Promise<{ claims: Array<AttemptClaim | null>; written: boolean[] }> {
    if (writes.length === 0) return { claims: await this.claimEach(keys, leaseUntil), written: [] };
    if (keys.length === 0) return { claims: [], written: await this.recordWithOutbox(writes) };
    const claims = keys.map(newClaim);
    const targets = outcomeTargets(writes);
    const statement = recordStatement(targets, this.dataSource.manager, (from) =>
      claimInsert(keys, claims, leaseUntil, from),
    );
    const rows = await preparedQuery<{ id: string }>(
      this.dataSource.manager,
      statement.sql,
      statement.parameters,
    );
    const returned = new Set(rows.map((row) => row.id));
    return {
      claims: claims.map((claim) => (returned.has(claim.id) ? claim : null)),
      written: targets.map(({ id }) => returned.has(id)),
    };
  }

  /**
   * Extends every given claim that is still held (in progress, same token) to `leaseUntil`, in
   * one statement; the ids of those it extended (the others were taken over).
   */
  async renew(claims: readonly AttemptClaim[], leaseUntil: Date): Promise<Set<string>> {
    if (claims.length === 0) return new Set();
    const rows = await preparedQuery<{ id: string }>(
      this.dataSource.manager,
      `WITH renewed AS (
         UPDATE delivery.attempts AS attempt SET lease_until = $1
           FROM unnest($2::uuid[], $3::uuid[]) AS held(id, token)
          WHERE attempt.id = held.id AND attempt.claim_token = held.token
            AND attempt.state = 'in_progress'
         RETURNING attempt.id
       ) SELECT id FROM renewed`,
      [leaseUntil, claims.map((claim) => claim.id), claims.map((claim) => claim.token)],
    );
    return new Set(rows.map((row) => row.id));
  }

  /** Gives a claim up before anything was sent, so that the job can run again at once. */
  async release(claim: AttemptClaim): Promise<void> {
    await preparedQuery(
      this.dataSource.manager,
      `DELETE FROM delivery.attempts WHERE id = $1 AND claim_token = $2 AND state = 'in_progress'`,
      [claim.id, claim.token],
    );
  }

  /**
   * Records the outcome of a claimed attempt (its outbox rows aside); false (nothing written)
   * when the claim was lost to a takeover.
   */
  async finish(
    claim: AttemptClaim,
    record: OutcomeRecord,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<boolean> {
    const [written] = await this.recordEach([{ kind: 'claimed', claim, record }], manager);
    return written === true;
  }

  /**
   * Ends an attempt whose worker vanished (its lease ran out) with the given outcome; false when
   * it is no longer abandoned (finished or taken over meanwhile).
   */
  async takeOver(
    row: AttemptRow,
    now: Date,
    record: OutcomeRecord,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<boolean> {
    const ended = await this.updateFinished(
      manager,
      { type: 'timestamptz', condition: 'attempt.lease_until < finished.guard' },
      [{ id: row.id, guard: now, record }],
    );
    return ended.has(row.id);
  }

  /**
   * Records an attempt that needed no network I/O (expired, sandbox, nothing to send), its outbox
   * rows aside; false when the attempt already exists.
   */
  async recordWithoutSending(
    messageId: string,
    accountId: string,
    attempt: number,
    sandbox: boolean,
    record: OutcomeRecord,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<boolean> {
    const [written] = await this.recordEach(
      [{ kind: 'unclaimed', messageId, accountId, attempt, sandbox, record }],
      manager,
    );
    return written === true;
  }

  /**
   * Records many outcomes (their outbox rows aside) in one statement: an UPDATE of the claimed
   * attempts, each under its claim token, and an INSERT of the unclaimed ones. Whether each was
   * written, in order: false for a claim lost to a takeover, or an unclaimed attempt that already
   * exists (or comes twice).
   */
  recordEach(
    writes: readonly OutcomeWrite[],
    manager: EntityManager = this.dataSource.manager,
  ): Promise<boolean[]> {
    return this.record(manager, writes, false);
  }

  /**
   * Records many outcomes as recordEach does and, in the same statement (atomic on its own: no
   * BEGIN and COMMIT round trips), the outbox rows (event, maybe the next job) of those it wrote.
   */
  recordWithOutbox(writes: readonly OutcomeWrite[]): Promise<boolean[]> {
    return this.record(this.dataSource.manager, writes, true);
  }

  private async record(
    manager: EntityManager,
    writes: readonly OutcomeWrite[],
    withOutbox: boolean,
  ): Promise<boolean[]> {
    if (writes.length === 0) return [];
    const targets = outcomeTargets(writes);
    const statement = recordStatement(targets, withOutbox ? manager : null);
    // Its text depends only on which kinds of writes and rows it has: prepared.
    const rows = await preparedQuery<{ id: string }>(manager, statement.sql, statement.parameters);
    const written = new Set(rows.map((row) => row.id));
    return targets.map(({ id }) => written.has(id));
  }

  /**
   * One UPDATE … SET each attempt's outcome, of those still in progress that meet the guard's
   * condition (each attempt has its own guard value); the ids of the attempts it matched.
   */
  private async updateFinished(
    manager: EntityManager,
    guard: FinishGuard,
    updates: ReadonlyArray<{ id: string; guard: unknown; record: OutcomeRecord }>,
  ): Promise<Set<string>> {
    if (updates.length === 0) return new Set();
    const update = finishedUpdate(guard, updates, 1);
    const rows = await manager.query<Array<{ id: string }>>(
      `WITH updated AS (${update.sql}) SELECT id FROM updated`,
      update.parameters,
    );
    return new Set(rows.map((row) => row.id));
  }
}

/** A statement's text and its parameters ($1 on). */
interface Statement {
  sql: string;
  parameters: unknown[];
}

/** Which attempts an UPDATE of outcomes may finish: those whose column meets the guard value. */
interface FinishGuard {
  type: 'uuid' | 'timestamptz';
  condition: string;
}

const CLAIM_GUARD: FinishGuard = {
  type: 'uuid',
  condition: 'attempt.claim_token = finished.guard',
};

/**
 * The one statement recording each write (in the row `id`), answering the ids of the attempts it
 * wrote; with `outboxOf` (the manager whose outbox takes them), it also inserts the outbox rows
 * of the attempts written, in order, and no other.
 */
function recordStatement(
  targets: ReadonlyArray<{ write: OutcomeWrite; id: string }>,
  outboxOf: EntityManager | null,
  claimPart?: (from: number) => Statement,
): Statement {
  const claimed: Array<{ id: string; guard: unknown; record: OutcomeRecord }> = [];
  const unclaimed: Array<{ id: string; write: UnclaimedOutcome }> = [];
  for (const { write, id } of targets) {
    if (write.kind === 'claimed')
      claimed.push({ id, guard: write.claim.token, record: write.record });
    else unclaimed.push({ id, write });
  }
  const parts: string[] = [];
  const parameters: unknown[] = [];
  const add = (name: string, build: (from: number) => Statement) => {
    const part = build(parameters.length + 1);
    parameters.push(...part.parameters);
    parts.push(`${name} AS (${part.sql})`);
  };
  const written: string[] = [];
  if (claimed.length > 0) {
    add('finished', (from) => finishedUpdate(CLAIM_GUARD, claimed, from));
    written.push('SELECT id FROM finished');
  }
  if (unclaimed.length > 0) {
    add('inserted', (from) => unclaimedInsert(unclaimed, from));
    written.push('SELECT id FROM inserted');
  }
  const owned = targets.flatMap(({ write, id }) =>
    write.record.entries.map((entry) => ({ entry, owner: id })),
  );
  if (outboxOf && owned.length > 0) {
    const statement = enqueueOutboxStatement(
      outboxOf,
      owned.map(({ entry }) => entry),
    );
    const { alone, batched } = outcomeBatchRows(owned, statement.parameters);
    if (alone.owners.length > 0) {
      add('queued', (from) => outboxRowsOfWritten(alone.columns, alone.owners, written, from));
    }
    if (batched.owners.length > 0) {
      add('batched', (from) => outcomeBatchesOfWritten(batched, written, from));
    }
  }
  if (claimPart) {
    // New claims' ids are fresh: no outcome's outbox row names one.
    add('claimed', claimPart);
    written.push('SELECT id FROM claimed');
  }
  return { sql: `WITH ${parts.join(',\n')}\n${written.join(' UNION ALL ')}`, parameters };
}

/** A new claim's row id and token. */
function newClaim(): AttemptClaim {
  return { id: randomUUID(), token: randomUUID() };
}

/** The row each write ends in: its claimed attempt's, or the new one of an unclaimed attempt. */
function outcomeTargets(
  writes: readonly OutcomeWrite[],
): Array<{ write: OutcomeWrite; id: string }> {
  return writes.map((write) => ({
    write,
    id: write.kind === 'claimed' ? write.claim.id : randomUUID(),
  }));
}

/**
 * The INSERT of new claims (each `claims[i]` for `keys[i]`), each until `leaseUntil`, of the
 * attempts no row exists for yet; it returns the ids it inserted. Parameters from `from`.
 */
function claimInsert(
  keys: readonly ClaimKey[],
  claims: readonly AttemptClaim[],
  leaseUntil: Date,
  from: number,
): Statement {
  const at = (offset: number) => `$${from + offset}`;
  return {
    sql: `INSERT INTO delivery.attempts
         (id, message_id, account_id, attempt, state, claim_token, lease_until, started_at)
       SELECT id, message_id, account_id, attempt, 'in_progress', token, ${at(0)}, started_at
         FROM unnest(${at(1)}::uuid[], ${at(2)}::uuid[], ${at(3)}::uuid[], ${at(4)}::integer[],
                     ${at(5)}::uuid[], ${at(6)}::timestamptz[])
              AS claimed(id, message_id, account_id, attempt, token, started_at)
       ON CONFLICT DO NOTHING RETURNING id`,
    parameters: [
      leaseUntil,
      claims.map((claim) => claim.id),
      keys.map((key) => key.messageId),
      keys.map((key) => key.accountId),
      keys.map((key) => key.attempt),
      claims.map((claim) => claim.token),
      keys.map((key) => key.startedAt),
    ],
  };
}

/** The UPDATE of outcomes (see updateFinished), its parameters numbered from `from`. */
function finishedUpdate(
  guard: FinishGuard,
  updates: ReadonlyArray<{ id: string; guard: unknown; record: OutcomeRecord }>,
  from: number,
): Statement {
  return {
    sql: `UPDATE delivery.attempts AS attempt
            SET ${FINISHED_COLUMNS.map((column) => `${column} = ${finishedValue(column)}`).join(', ')}
           FROM unnest($${from}::uuid[], $${from + 1}::${guard.type}[], ${finishedArrays(from + 2)})
                AS finished(id, guard, ${FINISHED_VALUE_COLUMNS.map(([column]) => column).join(', ')})
          WHERE attempt.id = finished.id AND attempt.state = 'in_progress' AND ${guard.condition}
         RETURNING attempt.id`,
    parameters: [
      updates.map((update) => update.id),
      updates.map((update) => update.guard),
      ...finishedValueArrays(updates.map((update) => update.record)),
    ],
  };
}

/** The INSERT of unclaimed attempts (those not there before), parameters from `from`. */
function unclaimedInsert(
  inserts: ReadonlyArray<{ id: string; write: UnclaimedOutcome }>,
  from: number,
): Statement {
  const writes = inserts.map((insert) => insert.write);
  const at = (offset: number) => `$${from + offset}`;
  return {
    sql: `INSERT INTO delivery.attempts (${FINISHED_COLUMNS.join(', ')},
         id, message_id, account_id, attempt, started_at, sandbox)
       SELECT ${FINISHED_COLUMNS.map(finishedValue).join(', ')},
              id, message_id, account_id, attempt, started_at, sandbox
         FROM unnest(${at(0)}::uuid[], ${at(1)}::uuid[], ${at(2)}::uuid[], ${at(3)}::integer[],
                     ${at(4)}::timestamptz[], ${at(5)}::boolean[], ${finishedArrays(from + 6)})
              AS finished(id, message_id, account_id, attempt, started_at, sandbox,
                          ${FINISHED_VALUE_COLUMNS.map(([column]) => column).join(', ')})
       ON CONFLICT DO NOTHING RETURNING id`,
    parameters: [
      inserts.map((insert) => insert.id),
      writes.map((write) => write.messageId),
      writes.map((write) => write.accountId),
      writes.map((write) => write.attempt),
      writes.map((write) => write.record.startedAt ?? write.record.finishedAt),
      writes.map((write) => write.sandbox),
      ...finishedValueArrays(writes.map((write) => write.record)),
    ],
  };
}

/** The outbox columns of enqueueOutboxStatement's parameters, one array each, in their order. */
const OUTBOX_ROW_ARRAYS = ['uuid', 'text', 'text', 'jsonb', 'timestamptz', 'jsonb'] as const;

/**
 * The INSERT of the outbox rows (`columns`: enqueueOutboxStatement's parameters, its rows as
 * enqueueOutbox writes them) whose attempt (`owners`) is among those `written` selects.
 */
function outboxRowsOfWritten(
  columns: readonly unknown[],
  owners: readonly string[],
  written: readonly string[],
  from: number,
): Statement {
  if (columns.length !== OUTBOX_ROW_ARRAYS.length) {
    throw new Error('the outbox rows have other columns than the attempts repository writes');
  }
  const arrays = [...OUTBOX_ROW_ARRAYS, 'uuid']
    .map((type, index) => `$${from + index}::${type}[]`)
    .join(', ');
  return {
    sql: `INSERT INTO delivery.outbox (id, stream, subject, payload, available_at, trace)
       SELECT id, stream, subject, payload, coalesce(available_at, now()), trace
         FROM unnest(${arrays}) WITH ORDINALITY
              AS queued_row(id, stream, subject, payload, available_at, trace, attempt_id, n)
        WHERE attempt_id IN (${written.join(' UNION ALL ')})
        ORDER BY n`,
    parameters: [...columns, owners],
  };
}

/**
 * The INSERT of one `message.outcome_batch` outbox row per batch id, carrying in order the events
 * (JSON text) of the batch whose attempt (`owners`) is among those `written` selects; none for a
 * batch with no such event.
 */
function outcomeBatchesOfWritten(
  batched: OutboxRowsOfAttempts['batched'],
  written: readonly string[],
  from: number,
): Statement {
  const at = (offset: number) => `$${from + offset}`;
  const subject = DeliveryStreamSubjects.outcomeBatch;
  const type: DeliveryOutcomeBatchEvent['type'] = 'message.outcome_batch';
  return {
    sql: `INSERT INTO delivery.outbox (id, stream, subject, payload, available_at, trace)
       SELECT event.batch_id, ${at(0)}, ${at(1)},
              jsonb_build_object('id', event.batch_id, 'type', ${at(2)}::text,
                'timestamp', ${at(3)}::text,
                'data', jsonb_build_object('events', jsonb_agg(event.payload ORDER BY event.n))),
              now(), ${at(4)}::jsonb
         FROM unnest(${at(5)}::uuid[], ${at(6)}::jsonb[], ${at(7)}::uuid[]) WITH ORDINALITY
              AS event(batch_id, payload, attempt_id, n)
        WHERE event.attempt_id IN (${written.join(' UNION ALL ')})
        GROUP BY event.batch_id
        ORDER BY min(event.n)`,
    parameters: [
      subject.stream,
      subject.name,
      type,
      new Date().toISOString(),
      batched.trace,
      batched.batchIds,
      batched.payloads,
      batched.owners,
    ],
  };
}

/** The columns recording an outcome sets. */
const FINISHED_COLUMNS = [
  'state',
  'claim_token',
  'lease_until',
  'finished_at',
  'outcome',
  'status',
  'remote_host',
  'reply',
  'bounce_classification',
  'tls',
  'next_attempt_at',
  'delivered_to',
  'bounced_to',
] as const;

/**
 * The columns whose values differ from outcome to outcome, with their array parameters' types, in
 * the order of finishedValueArrays. A recipient list travels as a JSON array (an array of arrays
 * would be unnested element by element).
 */
const FINISHED_VALUE_COLUMNS = [
  ['finished_at', 'timestamptz'],
  ['outcome', 'text'],
  ['status', 'text'],
  ['remote_host', 'text'],
  ['reply', 'text'],
  ['bounce_classification', 'text'],
  ['tls', 'boolean'],
  ['next_attempt_at', 'timestamptz'],
  ['delivered_to', 'jsonb'],
  ['bounced_to', 'jsonb'],
] as const;

/** The finished columns every outcome sets to the same value. */
const FINISHED_CONSTANTS: Partial<Record<(typeof FINISHED_COLUMNS)[number], string>> = {
  state: `'done'`,
  claim_token: 'NULL::uuid',
  lease_until: 'NULL::timestamptz',
};

/** What a finished column is set to, from the `finished` row of the unnested parameters. */
function finishedValue(column: (typeof FINISHED_COLUMNS)[number]): string {
  const constant = FINISHED_CONSTANTS[column];
  if (constant !== undefined) return constant;
  if (column === 'delivered_to' || column === 'bounced_to') {
    return `ARRAY(SELECT jsonb_array_elements_text(finished.${column}))`;
  }
  return `finished.${column}`;
}

/** `$from::timestamptz[], …`: the array parameters of FINISHED_VALUE_COLUMNS from `$from` on. */
function finishedArrays(from: number): string {
  return FINISHED_VALUE_COLUMNS.map(([, type], index) => `$${from + index}::${type}[]`).join(', ');
}

/** One array per FINISHED_VALUE_COLUMNS entry, holding each record's value. */
function finishedValueArrays(records: readonly OutcomeRecord[]): unknown[][] {
  const arrays: unknown[][] = [
    records.map((record) => record.finishedAt),
    records.map((record) => record.outcome.kind),
    records.map((record) => record.outcome.status),
    records.map((record) => record.outcome.remoteHost.slice(0, 255)),
    records.map((record) => record.outcome.reply.slice(0, 2_000)),
    records.map((record) => record.outcome.bounceClassification ?? null),
    records.map((record) => record.tls),
    records.map((record) => record.nextAttemptAt),
    records.map((record) => JSON.stringify(recipientsWith(record, 'delivered'))),
    records.map((record) => JSON.stringify(recipientsWith(record, 'bounced'))),
  ];
  if (arrays.length !== FINISHED_VALUE_COLUMNS.length) {
    throw new Error('finished columns and values differ');
  }
  return arrays;
}

function recipientsWith(record: OutcomeRecord, result: 'delivered' | 'bounced'): string[] {
  return record.outcome.recipients
    .filter((recipient) => recipient.result === result)
    .map((recipient) => recipient.email);
}
