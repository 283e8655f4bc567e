import type { DeliveryAttemptRecord, MessageStatus } from '@envoi/contracts-messages';
import { preparedQuery } from '@envoi/shared-database';
import { Inbox } from '@envoi/shared-outbox';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';

import { MESSAGES_SCHEMA } from '../database/data-source-options';
import { MessageEntity } from '../messages/message.entity';
import type { BatchMessage, EventClaim } from './batch-fold';
import type { DeliveryOutcome } from './delivery-outcome';
import type { DeliveryState } from './status-machine';

/** The columns a batch reads of each of its messages. */
const DELIVERY_COLUMNS = `id, account_id, retention_data_days, status, sent_at, delivered_at,
         bounce_classification, num_attempts, delivery_attempts`;

/**
 * Locks the messages in id order, so that batches of several consumers and replicas (and the
 * one-event path, which locks one) never wait on each other in a cycle.
 */
const LOCK_MESSAGES_SQL = `
  SELECT ${DELIVERY_COLUMNS}
  FROM ${MESSAGES_SCHEMA}.messages
  WHERE id = ANY($1::uuid[])
  ORDER BY id
  FOR UPDATE`;

/**
 * LOCK_MESSAGES_SQL and the claim of the batch's events in one statement: each event of a locked
 * message of its account, each event id once (its first such occurrence), ON CONFLICT DO NOTHING.
 * The claims wait for every lock (they join the count of the locked rows, known only once all are
 * taken), so whoever else claims one of these events held its message's lock and has ended.
 * Every row answers the ids claimed.
 */
const LOCK_AND_CLAIM_SQL = `
  WITH locked AS (${LOCK_MESSAGES_SQL}),
  every_message_locked AS (SELECT count(*) FROM locked),
  claimed AS (
    INSERT INTO ${MESSAGES_SCHEMA}.processed_events (event_id, type, record_id)
    SELECT DISTINCT ON (event.event_id) event.event_id, event.type, locked.id
    FROM every_message_locked,
         unnest($2::varchar[], $3::varchar[], $4::uuid[], $5::uuid[]) WITH ORDINALITY
           AS event(event_id, type, message_id, account_id, position)
         JOIN locked
           ON locked.id = event.message_id AND locked.account_id = event.account_id
    ORDER BY event.event_id, event.position
    ON CONFLICT (event_id) DO NOTHING
    RETURNING event_id
  )
  SELECT locked.*, ARRAY(SELECT event_id FROM claimed) AS claimed_event_ids
  FROM locked`;

/**
 * The messages of a batch without locking them, each with its row version (`xmin`, new on every
 * write), and which of the batch's events were applied before, as of one snapshot.
 */
const READ_BATCH_SQL = `
  SELECT ${DELIVERY_COLUMNS}, xmin::text AS version,
         ARRAY(SELECT event_id FROM ${MESSAGES_SCHEMA}.processed_events
               WHERE event_id = ANY($2::varchar[])) AS processed_event_ids
  FROM ${MESSAGES_SCHEMA}.messages
  WHERE id = ANY($1::uuid[])`;

/** The new delivery fields of messages, as WRITE_STATES_SQL and WRITE_IF_UNCHANGED_SQL take them. */
const NEW_STATES = `unnest($1::uuid[], $2::varchar[], $3::timestamptz[], $4::timestamptz[],
              $5::varchar[], $6::integer[], $7::jsonb[])
    AS u(id, status, sent_at, delivered_at, bounce_classification, num_attempts,
         delivery_attempts)`;

/** The delivery columns set from NEW_STATES (`u`); `updated_at` is the same for all. */
const SET_STATES = `status = u.status,
      sent_at = u.sent_at,
      delivered_at = u.delivered_at,
      bounce_classification = u.bounce_classification,
      num_attempts = u.num_attempts,
      delivery_attempts = u.delivery_attempts,
      updated_at = $8`;

/**
 * Claims the events and writes the new states in one statement, only if none of the messages was
 * written since it was read (its version, $9, is still the row's): locks them in id order first
 * (the claims and the writes wait for every lock: they join the outcome of the check, known only
 * once all are taken). Whoever claims an event of one of these messages writes it in the same
 * transaction, so an event claimed since the read shows as a new version. Answers whether it wrote.
 */
const WRITE_IF_UNCHANGED_SQL = `
  WITH unchanged AS (
    SELECT m.id
    FROM ${MESSAGES_SCHEMA}.messages AS m
    JOIN unnest($1::uuid[], $9::text[]) AS read(id, version) ON read.id = m.id
    WHERE m.xmin::text = read.version
    ORDER BY m.id
    FOR UPDATE OF m
  ),
  check_passed AS (SELECT count(*) = cardinality($1::uuid[]) AS ok FROM unchanged),
  claimed AS (
    INSERT INTO ${MESSAGES_SCHEMA}.processed_events (event_id, type, record_id)
    SELECT claim.event_id, claim.type, claim.record_id
    FROM check_passed, unnest($10::varchar[], $11::varchar[], $12::uuid[])
      AS claim(event_id, type, record_id)
    WHERE check_passed.ok
    ON CONFLICT (event_id) DO NOTHING
    RETURNING event_id
  ),
  written AS (
    UPDATE ${MESSAGES_SCHEMA}.messages AS m
    SET ${SET_STATES}
    FROM check_passed, ${NEW_STATES}
    WHERE check_passed.ok AND m.id = u.id
    RETURNING m.id
  )
  SELECT ok FROM check_passed`;

/** A message's DELIVERY_COLUMNS, as a batch reads them (locked or not). */
interface DeliveryRow {
  id: string;
  account_id: string;
  retention_data_days: number;
  status: MessageStatus;
  sent_at: Date | null;
  delivered_at: Date | null;
  bounce_classification: string | null;
  num_attempts: number;
  delivery_attempts: DeliveryAttemptRecord[];
}

function toBatchMessage(row: DeliveryRow): BatchMessage {
  return {
    id: row.id,
    accountId: row.account_id,
    retentionDataDays: row.retention_data_days,
    state: {
      status: row.status,
      sentAt: row.sent_at,
      deliveredAt: row.delivered_at,
      bounceClassification: row.bounce_classification,
      numAttempts: row.num_attempts,
      deliveryAttempts: row.delivery_attempts,
    },
  };
}

/** A batch's messages read without locks: their state, their row versions, its events applied. */
export interface ReadBatch {
  messages: BatchMessage[];
  /** Each message's row version, by its id as stored. */
  versions: Map<string, string>;
  /** The ids of the batch's events applied before. */
  processed: Set<string>;
}

/** What a batch holds once its messages are locked and its new events claimed. */
export interface LockedBatch {
  /** The batch's messages that exist, locked until the transaction ends. */
  messages: BatchMessage[];
  /** The ids of the batch's events not claimed before. */
  claimed: Set<string>;
}

/** The service's inbox: the delivery events applied, each with its message (deleted with it). */
const MESSAGES_INBOX = new Inbox(MESSAGES_SCHEMA);

/** Writes the delivery fields of every changed message. */
const WRITE_STATES_SQL = `
  UPDATE ${MESSAGES_SCHEMA}.messages AS m
  SET ${SET_STATES}
  FROM ${NEW_STATES}
  WHERE m.id = u.id`;

/**
 * The delivery state of messages and the events applied to them (messages.processed_events). A
 * batch's statements run one each whatever its size: read, then claim and write if unchanged, each
 * on its own; or, in the caller's transaction, lock the messages and claim the events, then write
 * the states.
 */
@Injectable()
export class DeliveryStatesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Reads and locks the message of the account (null when there is none) until the end. */
  lockOne(
    messageId: string,
    accountId: string,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<MessageEntity | null> {
    return manager.findOne(MessageEntity, {
      where: { id: messageId, accountId },
      lock: { mode: 'pessimistic_write' },
    });
  }

  /**
   * Locks the outcomes' messages and claims their events in one statement (LOCK_AND_CLAIM_SQL):
   * as if it locked the messages, then claimed (claimEvents) the events of those batch-fold's
   * messageOf finds, each id at its first such occurrence.
   */
  async lockAndClaim(
    outcomes: readonly DeliveryOutcome[],
    manager: EntityManager = this.dataSource.manager,
  ): Promise<LockedBatch> {
    const rows = await preparedQuery<DeliveryRow & { claimed_event_ids: string[] }>(
      manager,
      LOCK_AND_CLAIM_SQL,
      [
        [...new Set(outcomes.map((outcome) => outcome.messageId))],
        outcomes.map((outcome) => outcome.eventId),
        outcomes.map((outcome) => outcome.type),
        outcomes.map((outcome) => outcome.messageId),
        outcomes.map((outcome) => outcome.accountId),
      ],
    );
    return {
      messages: rows.map(toBatchMessage),
      claimed: new Set(rows[0]?.claimed_event_ids ?? []),
    };
  }

  /**
   * Claims the events; answers the ids not claimed before. Run after locking their messages:
   * whoever else claims one of these events holds its message's lock, so its claim has committed
   * (and is seen here) or rolled back by now.
   */
  claimEvents(
    claims: readonly EventClaim[],
    manager: EntityManager = this.dataSource.manager,
  ): Promise<Set<string>> {
    return MESSAGES_INBOX.claim(
      manager,
      claims.map(({ eventId, messageId, type }) => ({ eventId, type, recordId: messageId })),
    );
  }

  /** Writes the delivery fields of one message. */
  async writeState(
    messageId: string,
    state: DeliveryState,
    updatedAt: Date,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<void> {
    await manager.update(
      MessageEntity,
      { id: messageId },
      {
        status: state.status,
        sentAt: state.sentAt,
        deliveredAt: state.deliveredAt,
        bounceClassification: state.bounceClassification,
        numAttempts: state.numAttempts,
        deliveryAttempts: state.deliveryAttempts,
        updatedAt,
      },
    );
  }

  /** Writes the delivery fields of every changed message; `updated_at` is the same for all. */
  async writeStates(
    states: readonly NewState[],
    updatedAt: Date,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<void> {
    if (states.length === 0) return;
    await preparedQuery(manager, WRITE_STATES_SQL, stateParameters(states, updatedAt));
  }

  /**
   * The batch's messages as they are now (not locked), their versions, and which of the
   * outcomes' events were applied before.
   */
  async readBatch(outcomes: readonly DeliveryOutcome[]): Promise<ReadBatch> {
    const rows = await preparedQuery<
      DeliveryRow & { version: string; processed_event_ids: string[] }
    >(this.dataSource.manager, READ_BATCH_SQL, [
      [...new Set(outcomes.map((outcome) => outcome.messageId))],
      outcomes.map((outcome) => outcome.eventId),
    ]);
    return {
      messages: rows.map(toBatchMessage),
      versions: new Map(rows.map((row) => [row.id, row.version])),
      processed: new Set(rows[0]?.processed_event_ids ?? []),
    };
  }

  /**
   * Claims the events and writes the states, one statement of its own (WRITE_IF_UNCHANGED_SQL),
   * only if none of these messages was written since `versions` were read (readBatch). False
   * when one was: then nothing is claimed or written.
   */
  async writeIfUnchanged(
    states: readonly NewState[],
    versions: ReadonlyMap<string, string>,
    claims: readonly EventClaim[],
    updatedAt: Date,
  ): Promise<boolean> {
    const [row] = await preparedQuery<{ ok: boolean }>(
      this.dataSource.manager,
      WRITE_IF_UNCHANGED_SQL,
      [
        ...stateParameters(states, updatedAt),
        states.map(({ id }) => versions.get(id) ?? null),
        claims.map((claim) => claim.eventId),
        claims.map((claim) => claim.type),
        claims.map((claim) => claim.messageId),
      ],
    );
    return row?.ok === true;
  }
}

/** A message's new delivery fields. */
export interface NewState {
  id: string;
  state: DeliveryState;
}

/** The parameters $1 to $8 of NEW_STATES and SET_STATES. */
function stateParameters(states: readonly NewState[], updatedAt: Date): unknown[] {
  return [
    states.map(({ id }) => id),
    states.map(({ state }) => state.status),
    states.map(({ state }) => state.sentAt?.toISOString() ?? null),
    states.map(({ state }) => state.deliveredAt?.toISOString() ?? null),
    states.map(({ state }) => state.bounceClassification),
    states.map(({ state }) => state.numAttempts),
    states.map(({ state }) => JSON.stringify(state.deliveryAttempts)),
    updatedAt,
  ];
}
