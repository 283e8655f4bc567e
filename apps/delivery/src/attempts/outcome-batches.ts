import { randomUUID } from 'node:crypto';

import {
  DeliveryStreamSubjects,
  OUTCOME_BATCH_MAX_BYTES,
  OUTCOME_BATCH_MAX_EVENTS,
} from '@envoi/contracts-delivery';
import { boundedBatches, type OutboxEntry } from '@envoi/shared-outbox';

/** The subjects whose events travel in `message.outcome_batch` stream messages instead. */
const BATCHED_SUBJECTS: ReadonlySet<string> = new Set(
  [
    DeliveryStreamSubjects.delivered,
    DeliveryStreamSubjects.transientError,
    DeliveryStreamSubjects.failed,
    DeliveryStreamSubjects.bounced,
    DeliveryStreamSubjects.suppressed,
  ].map((subject) => subject.name),
);

/** The outbox rows of some attempts' outcomes, each row with the attempt it belongs to. */
export interface OutboxRowsOfAttempts {
  /** Rows inserted as they are (the next jobs): enqueueOutboxStatement's parameters. */
  alone: { columns: unknown[][]; owners: string[] };
  /** Outcome events, each with the id of the batch it travels in, and their rows' trace. */
  batched: { batchIds: string[]; payloads: string[]; owners: string[]; trace: unknown };
}

/**
 * A batch's estimated bytes for an event of this JSON text: PostgreSQL writes the jsonb back with
 * at most one space more per `:` or `,`, so never more than twice the text's UTF-8 bytes.
 */
function estimatedBytes(json: string): number {
  return 2 * Buffer.byteLength(json, 'utf8');
}

/**
 * One of enqueueOutboxStatement's parameters: an array per outbox column (id, stream, subject,
 * payload as JSON text, available_at, trace), one element per row.
 */
function outboxColumn(parameter: unknown): readonly unknown[] {
  if (!Array.isArray(parameter)) throw new Error('an outbox parameter is not a column of rows');
  return parameter;
}

/**
 * Splits the outbox rows of outcomes recorded together: each outcome event due at once goes in
 * a `message.outcome_batch` (OUTCOME_BATCH_MAX_EVENTS events at most, fewer when their estimated
 * bytes would pass OUTCOME_BATCH_MAX_BYTES), in order; other rows stay alone.
 */
export function outcomeBatchRows(
  rows: ReadonlyArray<{ entry: OutboxEntry; owner: string }>,
  parameters: readonly unknown[],
): OutboxRowsOfAttempts {
  const columns = parameters.map(outboxColumn);
  const payloads = columns[3] ?? [];
  const alone: Array<{ index: number; owner: string }> = [];
  const events: Array<{ owner: string; json: string }> = [];
  rows.forEach(({ entry, owner }, index) => {
    const json = payloads[index];
    if (
      BATCHED_SUBJECTS.has(entry.subject.name) &&
      !entry.availableAt &&
      typeof json === 'string'
    ) {
      events.push({ owner, json });
    } else alone.push({ index, owner });
  });
  const batched: OutboxRowsOfAttempts['batched'] = {
    batchIds: [],
    payloads: [],
    owners: [],
    trace: columns[5]?.[0] ?? null,
  };
  const bounds = { maxItems: OUTCOME_BATCH_MAX_EVENTS, maxBytes: OUTCOME_BATCH_MAX_BYTES };
  for (const batch of boundedBatches(events, bounds, ({ json }) => estimatedBytes(json))) {
    const batchId = randomUUID();
    for (const { owner, json } of batch) {
      batched.batchIds.push(batchId);
      batched.payloads.push(json);
      batched.owners.push(owner);
    }
  }
  return {
    alone: {
      columns: columns.map((column) => alone.map(({ index }) => column[index])),
      owners: alone.map(({ owner }) => owner),
    },
    batched,
  };
}
