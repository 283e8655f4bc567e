import { randomUUID } from 'node:crypto';

import {
  DeliveryStreamSubjects,
  OUTCOME_BATCH_MAX_BYTES,
  OUTCOME_BATCH_MAX_EVENTS,
} from '@envoi/contracts-delivery';
import { MessagesStreamSubjects } from '@envoi/contracts-messages';
import type { OutboxEntry } from '@envoi/shared-outbox';

import { outcomeBatchRows } from './outcome-batches';

/** An outcome event's entry (its payload only needs to be JSON here), owned by a new attempt. */
function outcomeRow(reply = '250 ok'): { entry: OutboxEntry; owner: string } {
  const id = randomUUID();
  return {
    entry: { id, subject: DeliveryStreamSubjects.delivered, payload: { id, reply } },
    owner: randomUUID(),
  };
}

function jobRow(owner: string): { entry: OutboxEntry; owner: string } {
  const payload = { message_id: randomUUID(), account_id: randomUUID(), attempt: 2 };
  const availableAt = new Date(Date.now() + 60_000);
  return {
    entry: { id: randomUUID(), subject: MessagesStreamSubjects.deliveryJobs, payload, availableAt },
    owner,
  };
}

/** The rows split, with enqueueOutboxStatement's parameters for them. */
function split(rows: ReadonlyArray<{ entry: OutboxEntry; owner: string }>) {
  const entries = rows.map(({ entry }) => entry);
  const parameters = [
    entries.map((entry) => entry.id),
    entries.map((entry) => entry.subject.stream),
    entries.map((entry) => entry.subject.name),
    entries.map((entry) => JSON.stringify(entry.payload)),
    entries.map((entry) => entry.availableAt ?? null),
    entries.map(() => null),
  ];
  return outcomeBatchRows(rows, parameters);
}

/** How many events each batch holds, in order of the batch ids. */
function batchSizes(batchIds: readonly string[]): number[] {
  const sizes = new Map<string, number>();
  for (const id of batchIds) sizes.set(id, (sizes.get(id) ?? 0) + 1);
  return [...sizes.values()];
}

describe('outcomeBatchRows', () => {
  it('batches the outcome events, in order, and leaves the next jobs alone', () => {
    const first = outcomeRow();
    const second = outcomeRow();
    const job = jobRow(second.owner);

    const { alone, batched } = split([first, second, job]);

    expect(batched.owners).toEqual([first.owner, second.owner]);
    expect(batched.payloads.map((json) => JSON.parse(json) as unknown)).toEqual([
      first.entry.payload,
      second.entry.payload,
    ]);
    expect(new Set(batched.batchIds).size).toBe(1);
    expect(alone.owners).toEqual([job.owner]);
    expect(alone.columns[0]).toEqual([job.entry.id]);
    expect(alone.columns[3]).toEqual([JSON.stringify(job.entry.payload)]);
  });

  it(`puts at most ${OUTCOME_BATCH_MAX_EVENTS} events in a batch`, () => {
    const rows = Array.from({ length: 2 * OUTCOME_BATCH_MAX_EVENTS + 1 }, () => outcomeRow());

    const { batched } = split(rows);

    expect(batchSizes(batched.batchIds)).toEqual([
      OUTCOME_BATCH_MAX_EVENTS,
      OUTCOME_BATCH_MAX_EVENTS,
      1,
    ]);
    expect(batched.owners).toEqual(rows.map(({ owner }) => owner));
  });

  it('starts a new batch before the estimated bytes pass the bound', () => {
    // Each event estimated at a little over a third of the bound: two per batch.
    const reply = 'x'.repeat(Math.ceil(OUTCOME_BATCH_MAX_BYTES / 6));
    const rows = Array.from({ length: 5 }, () => outcomeRow(reply));

    const { batched } = split(rows);

    expect(batchSizes(batched.batchIds)).toEqual([2, 2, 1]);
  });

  it('counts a character JSON escapes at its escaped bytes', () => {
    const reply = '\u0001'.repeat(Math.ceil(OUTCOME_BATCH_MAX_BYTES / 30));
    const rows = Array.from({ length: 3 }, () => outcomeRow(reply));

    const { batched } = split(rows);

    expect(batchSizes(batched.batchIds)).toEqual([2, 1]);
  });

  it('batches nothing without outcome events', () => {
    const job = jobRow(randomUUID());

    const { alone, batched } = split([job]);

    expect(batched.batchIds).toEqual([]);
    expect(alone.owners).toEqual([job.owner]);
  });
});
