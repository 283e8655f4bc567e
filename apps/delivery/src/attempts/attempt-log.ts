import { randomUUID } from 'node:crypto';

import { enqueueOutbox, type OutboxEntry } from '@envoi/shared-outbox';
import type { DataSource, EntityManager } from 'typeorm';

import type { AttemptOutcome } from '../worker/outcomes';
import { DeliveryAttemptEntity } from './delivery-attempt.entity';

/** What recording an outcome writes besides the attempt row: the event, maybe the next job. */
export interface OutcomeRecord {
  outcome: AttemptOutcome;
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

/** A claim of an attempt: the row and the token its outcome must be recorded under. */
export interface AttemptClaim {
  id: string;
  token: string;
}

/**
 * The attempts table's statements: each claim and outcome is one compare-and-set, so two workers
 * holding the same job never both record (or both send, once a claim is held).
 */
export class AttemptLog {
  constructor(private readonly dataSource: DataSource) {}

  find(messageId: string, attempt: number): Promise<DeliveryAttemptEntity | null> {
    return this.dataSource.manager.findOneBy(DeliveryAttemptEntity, { messageId, attempt });
  }

  /** Recipients that accepted the message, or refused it for good, in earlier attempts. */
  async settledBefore(messageId: string, attempt: number): Promise<SettledRecipients> {
    const rows = await this.dataSource.manager.query<
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
    const rows = await this.dataSource.manager.query<Array<{ started_at: Date | null }>>(
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
    const result = await this.dataSource.manager
      .createQueryBuilder()
      .insert()
      .into(DeliveryAttemptEntity)
      .values({
        id,
        messageId,
        accountId,
        attempt,
        state: 'in_progress',
        claimToken: token,
        leaseUntil,
        startedAt,
        finishedAt: null,
        outcome: null,
        status: null,
        remoteHost: '',
        reply: '',
        bounceClassification: null,
        tls: null,
        sandbox: false,
        nextAttemptAt: null,
        deliveredTo: [],
        bouncedTo: [],
      })
      .orIgnore()
      .returning(['id'])
      .updateEntity(false)
      .execute();
    return (result.raw as unknown[]).length === 1 ? { id, token } : null;
  }

  /** Gives a claim up before anything was sent, so that the job can run again at once. */
  async release(claim: AttemptClaim): Promise<void> {
    await this.dataSource.manager.delete(DeliveryAttemptEntity, {
      id: claim.id,
      claimToken: claim.token,
      state: 'in_progress',
    });
  }

  /**
   * Records the outcome of a claimed attempt with its event and follow-up job, in one
   * transaction; false (nothing written) when the claim was lost to a takeover.
   */
  finish(claim: AttemptClaim, record: OutcomeRecord): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      const result = await manager
        .createQueryBuilder()
        .update(DeliveryAttemptEntity)
        .set(finishedColumns(record))
        .where('id = :id AND claim_token = :token AND state = :state', {
          id: claim.id,
          token: claim.token,
          state: 'in_progress',
        })
        .execute();
      if (result.affected !== 1) return false;
      await enqueueOutbox(manager, record.entries);
      return true;
    });
  }

  /**
   * Ends an attempt whose worker vanished (its lease ran out) with the given outcome; false when
   * it is no longer abandoned (finished or taken over meanwhile).
   */
  takeOver(row: DeliveryAttemptEntity, now: Date, record: OutcomeRecord): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      const result = await manager
        .createQueryBuilder()
        .update(DeliveryAttemptEntity)
        .set(finishedColumns(record))
        .where('id = :id AND state = :state AND lease_until < :now', {
          id: row.id,
          state: 'in_progress',
          now,
        })
        .execute();
      if (result.affected !== 1) return false;
      await enqueueOutbox(manager, record.entries);
      return true;
    });
  }

  /**
   * Records an attempt that needed no network I/O (expired, sandbox, nothing to send) with its
   * event, in one transaction; false when the attempt already exists.
   */
  recordWithoutSending(
    messageId: string,
    accountId: string,
    attempt: number,
    sandbox: boolean,
    record: OutcomeRecord,
  ): Promise<boolean> {
    return this.dataSource.transaction(async (manager: EntityManager) => {
      const result = await manager
        .createQueryBuilder()
        .insert()
        .into(DeliveryAttemptEntity)
        .values({
          id: randomUUID(),
          messageId,
          accountId,
          attempt,
          startedAt: record.finishedAt,
          sandbox,
          ...finishedColumns(record),
        })
        .orIgnore()
        .returning(['id'])
        .updateEntity(false)
        .execute();
      if ((result.raw as unknown[]).length !== 1) return false;
      await enqueueOutbox(manager, record.entries);
      return true;
    });
  }
}

function finishedColumns(record: OutcomeRecord) {
  return {
    state: 'done' as const,
    claimToken: null,
    leaseUntil: null,
    finishedAt: record.finishedAt,
    outcome: record.outcome.kind,
    status: record.outcome.status,
    remoteHost: record.outcome.remoteHost.slice(0, 255),
    reply: record.outcome.reply.slice(0, 2_000),
    bounceClassification: record.outcome.bounceClassification ?? null,
    tls: record.tls,
    nextAttemptAt: record.nextAttemptAt,
    deliveredTo: recipientsWith(record, 'delivered'),
    bouncedTo: recipientsWith(record, 'bounced'),
  };
}

function recipientsWith(record: OutcomeRecord, result: 'delivered' | 'bounced'): string[] {
  return record.outcome.recipients
    .filter((recipient) => recipient.result === result)
    .map((recipient) => recipient.email);
}
