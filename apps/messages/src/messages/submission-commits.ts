import type { MessageReceptionEvent } from '@envoi/contracts-messages';
import type { OutboxEntry } from '@envoi/shared-outbox';

import { GroupCommits } from './group-commits';
import type { InsertStatement } from './insert-rows';
import { receptionBatchEntries } from './reception-batches';

/**
 * Submissions (one SMTP transaction each) committed at once in one lane, and lanes: the SMTP
 * edge's connections wait on their commits, so several come together under load; those of one
 * request (an edge's batch) are gathered into one group.
 */
const SUBMISSION_GROUP_COMMITS = { lanes: 2, maxCallersPerGroup: 16, gatherTurn: true } as const;

/**
 * The group commits of submissions, each noting its messages' reception events: a group's travel
 * together in as few `message.reception_batch` stream messages as the limits allow, written by
 * `outboxRows` (one INSERT of outbox rows) ahead of the group's own rows.
 */
export function submissionCommits(
  execute: (statement: InsertStatement) => Promise<unknown>,
  outboxRows: (entries: readonly OutboxEntry[]) => InsertStatement,
): GroupCommits<readonly MessageReceptionEvent[]> {
  return new GroupCommits(execute, {
    ...SUBMISSION_GROUP_COMMITS,
    groupStatements: (receptions) => [outboxRows(receptionBatchEntries(receptions.flat()))],
  });
}
