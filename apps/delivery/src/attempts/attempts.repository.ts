import { randomUUID } from 'node:crypto';

import type { OutboxEntry } from '@envoi/shared-outbox';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';

import type { AttemptOutcome } from '../worker/outcomes';
import type { AttemptState } from './delivery-attempt.entity';

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

/** A claim of an attempt: the row and the token its outcome must be recorded under. */
export interface AttemptClaim {
  id: string;
  token: string;
}

/**
 * The attempts table's statements, in plain SQL (each runs once or twice per message: no query
 * builder in the hot path). Each claim and outcome is one compare-and-set, so two workers
 * holding the same job never both record (or both send, once a claim is held). The outcome's
 * writes run in the caller's transaction, with its outbox rows.
 */
@Injectable()
export class AttemptsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async find(messageId: string, attempt: number): Promise<AttemptRow | null> {
    const rows = await this.dataSource.query<AttemptRow[]>(
      `SELECT ${ATTEMPT_ROW_COLUMNS}
         FROM delivery.attempts WHERE message_id = $1 AND attempt = $2`,
      [messageId, attempt],
    );
    return rows[0] ?? null;
  }

  /** The given attempt of each message that has one, by message id, in one query. */
  async findEach(messageIds: readonly string[], attempt: number): Promise<Map<string, AttemptRow>> {
    const rows = await this.dataSource.query<AttemptRow[]>(
      `SELECT ${ATTEMPT_ROW_COLUMNS}
         FROM delivery.attempts WHERE message_id = ANY($1::uuid[]) AND attempt = $2`,
      [messageIds, attempt],
    );
    return new Map(rows.map((row) => [row.messageId, row]));
  }

  /** Recipients that accepted the message, or refused it for good, in earlier attempts. */
  async settledBefore(messageId: string, attempt: number): Promise<SettledRecipients> {
    const rows = await this.dataSource.query<
      Array<{ delivered: string[] | null; bounced: string[] | null }>
    >(
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
    const rows = await this.dataSource.query<Array<{ started_at: Date | null }>>(
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
    const id = randomUUID();
    const token = randomUUID();
    const rows = await this.dataSource.query<unknown[]>(
      `INSERT INTO delivery.attempts
         (id, message_id, account_id, attempt, state, claim_token, lease_until, started_at)
       VALUES ($1, $2, $3, $4, 'in_progress', $5, $6, $7)
       ON CONFLICT DO NOTHING RETURNING id`,
      [id, messageId, accountId, attempt, token, leaseUntil, startedAt],
    );
    return rows.length === 1 ? { id, token } : null;
  }

  /**
   * Extends every given claim that is still held (in progress, same token) to `leaseUntil`, in
   * one statement; the ids of those it extended (the others were taken over).
   */
  async renew(claims: readonly AttemptClaim[], leaseUntil: Date): Promise<Set<string>> {
    if (claims.length === 0) return new Set();
    const rows = await this.dataSource.query<Array<{ id: string }>>(
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
    await this.dataSource.query(
      `DELETE FROM delivery.attempts WHERE id = $1 AND claim_token = $2 AND state = 'in_progress'`,
      [claim.id, claim.token],
    );
  }

  /**
   * Records the outcome of a claimed attempt (its outbox rows aside); false (nothing written)
   * when the claim was lost to a takeover.
   */
  finish(
    claim: AttemptClaim,
    record: OutcomeRecord,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<boolean> {
    return this.recordFinished(
      manager,
      record,
      `id = $${FINISHED_PARAMETERS + 1} AND claim_token = $${FINISHED_PARAMETERS + 2}
       AND state = 'in_progress'`,
      [claim.id, claim.token],
    );
  }

  /**
   * Ends an attempt whose worker vanished (its lease ran out) with the given outcome; false when
   * it is no longer abandoned (finished or taken over meanwhile).
   */
  takeOver(
    row: AttemptRow,
    now: Date,
    record: OutcomeRecord,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<boolean> {
    return this.recordFinished(
      manager,
      record,
      `id = $${FINISHED_PARAMETERS + 1} AND state = 'in_progress'
       AND lease_until < $${FINISHED_PARAMETERS + 2}`,
      [row.id, now],
    );
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
    const rows = await manager.query<unknown[]>(
      `INSERT INTO delivery.attempts (${FINISHED_COLUMNS.join(', ')},
         id, message_id, account_id, attempt, started_at, sandbox)
       VALUES (${placeholders(1, FINISHED_PARAMETERS + 6)})
       ON CONFLICT DO NOTHING RETURNING id`,
      [
        ...finishedValues(record),
        randomUUID(),
        messageId,
        accountId,
        attempt,
        record.startedAt ?? record.finishedAt,
        sandbox,
      ],
    );
    return rows.length === 1;
  }

  /** UPDATE … SET the outcome WHERE `condition`; whether it matched the attempt. */
  private async recordFinished(
    manager: EntityManager,
    record: OutcomeRecord,
    condition: string,
    conditionValues: unknown[],
  ): Promise<boolean> {
    const assignments = FINISHED_COLUMNS.map((column, index) => `${column} = $${index + 1}`);
    const rows = await manager.query<unknown[]>(
      `WITH updated AS (
         UPDATE delivery.attempts SET ${assignments.join(', ')} WHERE ${condition} RETURNING id
       ) SELECT id FROM updated`,
      [...finishedValues(record), ...conditionValues],
    );
    return rows.length === 1;
  }
}

/** The columns recording an outcome sets, in the order of finishedValues. */
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
const FINISHED_PARAMETERS = FINISHED_COLUMNS.length;

function finishedValues(record: OutcomeRecord): unknown[] {
  const values = [
    'done',
    null,
    null,
    record.finishedAt,
    record.outcome.kind,
    record.outcome.status,
    record.outcome.remoteHost.slice(0, 255),
    record.outcome.reply.slice(0, 2_000),
    record.outcome.bounceClassification ?? null,
    record.tls,
    record.nextAttemptAt,
    recipientsWith(record, 'delivered'),
    recipientsWith(record, 'bounced'),
  ];
  if (values.length !== FINISHED_PARAMETERS) throw new Error('finished columns and values differ');
  return values;
}

/** `$from, …, $to`. */
function placeholders(from: number, to: number): string {
  return Array.from({ length: to - from + 1 }, (_, index) => `$${from + index}`).join(', ');
}

function recipientsWith(record: OutcomeRecord, result: 'delivered' | 'bounced'): string[] {
  return record.outcome.recipients
    .filter((recipient) => recipient.result === result)
    .map((recipient) => recipient.email);
}
