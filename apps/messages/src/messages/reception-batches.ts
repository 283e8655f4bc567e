import { randomUUID } from 'node:crypto';

import {
  type MessageReceptionEvent,
  MessagesStreamSubjects,
  RECEPTION_BATCH_MAX_EVENTS,
} from '@envoi/contracts-messages';
import { type OutboxEntry, outboxEntry } from '@envoi/shared-outbox';

/**
 * A batch's size estimate at most: its events' text at six bytes a character (JSON's `\uXXXX`
 * escape, the worst case) plus their fixed fields, far below the stream's 1 MB messages.
 */
const BATCH_MAX_ESTIMATED_BYTES = 256 * 1024;
const EVENT_FIXED_BYTES = 400;

function estimatedBytes({ data }: MessageReceptionEvent): number {
  const text =
    data.from.length + data.recipient.length + data.subject.length + data.message_id_header.length;
  return EVENT_FIXED_BYTES + 6 * text;
}

/**
 * The outbox rows of a send's `message.reception` events: one `message.reception_batch` stream
 * message per RECEPTION_BATCH_MAX_EVENTS events (fewer when their text is long), in order.
 */
export function receptionBatchEntries(
  accountId: string,
  timestamp: string,
  events: readonly MessageReceptionEvent[],
): OutboxEntry[] {
  const batches: MessageReceptionEvent[][] = [];
  let current: MessageReceptionEvent[] = [];
  let currentBytes = 0;
  for (const event of events) {
    const bytes = estimatedBytes(event);
    const full =
      current.length >= RECEPTION_BATCH_MAX_EVENTS ||
      (current.length > 0 && currentBytes + bytes > BATCH_MAX_ESTIMATED_BYTES);
    if (full) {
      batches.push(current);
      current = [];
      currentBytes = 0;
    }
    current.push(event);
    currentBytes += bytes;
  }
  if (current.length > 0) batches.push(current);
  return batches.map((batch) => {
    const id = randomUUID();
    return outboxEntry(MessagesStreamSubjects.receptionBatch, id, {
      id,
      type: 'message.reception_batch',
      timestamp,
      data: { account_id: accountId, events: batch },
    });
  });
}
