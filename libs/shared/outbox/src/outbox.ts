import type { StreamEvent, StreamEventOf, StreamSubject } from '@envoi/contracts-core';
import type { EntityManager } from 'typeorm';

import { outboxInsertStatement, outboxTable } from './outbox-insert';
import { OutboxMessageEntity } from './outbox-message.entity';

/** One row to publish: an event of the events stream or a job of a work queue. */
export interface OutboxEntry {
  /** Unique; becomes the `Nats-Msg-Id`. */
  id: string;
  subject: StreamSubject<unknown>;
  payload: unknown;
  /** Not published before this time; omitted: as soon as the transaction commits. */
  availableAt?: Date;
}

/** A typed entry: the payload must be the subject's type. */
export function outboxEntry<S extends StreamSubject<unknown>>(
  subject: S,
  id: string,
  payload: StreamEventOf<S>,
  availableAt?: Date,
): OutboxEntry {
  return { id, subject, payload, ...(availableAt ? { availableAt } : {}) };
}

/**
 * The payload key of a row that carries several events (reserved: no event or job has it). The
 * relay publishes each of them as its own stream message.
 */
export const OUTBOX_BATCH_KEY = '$events';

/**
 * One row for several events of one subject (a send's events, one per recipient): the relay
 * publishes each as its own stream message, in order, with its own id as `Nats-Msg-Id`, so
 * consumers see what `outboxEntry` per event would give them. `id` identifies the row (to cancel
 * it), not a message.
 */
export function outboxBatchEntry<S extends StreamSubject<StreamEvent<string, unknown>>>(
  subject: S,
  id: string,
  events: ReadonlyArray<StreamEventOf<S>>,
): OutboxEntry {
  if (events.length === 0) throw new Error(`outbox batch ${id}: no event`);
  return { id, subject, payload: { [OUTBOX_BATCH_KEY]: events } };
}

/**
 * Records durable rows inside the caller's transaction, in one INSERT: they are published if and
 * only if the transaction commits, each once it is due.
 */
export async function enqueueOutbox(
  manager: EntityManager,
  entries: readonly OutboxEntry[],
): Promise<void> {
  if (entries.length === 0) return;
  const { sql, parameters } = enqueueOutboxStatement(manager, entries);
  await manager.query(sql, parameters);
}

/**
 * The INSERT {@link enqueueOutbox} runs, for a caller that runs it as part of a statement of its
 * own (a data-modifying CTE): the rows are then published if and only if that statement commits.
 */
export function enqueueOutboxStatement(
  manager: EntityManager,
  entries: readonly OutboxEntry[],
): { sql: string; parameters: unknown[] } {
  return outboxInsertStatement(outboxTable(manager), entries);
}

/**
 * Records a durable event inside the caller's transaction: it is published if and only if the
 * transaction commits. The event's id becomes its `Nats-Msg-Id`.
 */
export async function enqueueEvent<S extends StreamSubject<StreamEvent<string, unknown>>>(
  manager: EntityManager,
  subject: S,
  event: StreamEventOf<S>,
): Promise<void> {
  await enqueueOutbox(manager, [outboxEntry(subject, event.id, event)]);
}

/**
 * Withdraws a row that has not been published yet, inside the caller's transaction; false when
 * it was already published (or withdrawn, or never existed). Waits for a relay that is
 * publishing it right now, so the answer is final.
 */
export async function cancelOutboxEntry(manager: EntityManager, id: string): Promise<boolean> {
  const result = await manager
    .createQueryBuilder()
    .update(OutboxMessageEntity)
    .set({ cancelledAt: () => 'now()' })
    .where('id = :id AND published_at IS NULL AND cancelled_at IS NULL', { id })
    .execute();
  return (result.affected ?? 0) > 0;
}
