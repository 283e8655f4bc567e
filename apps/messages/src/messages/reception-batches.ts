import { randomUUID } from 'node:crypto';

import {
  type MessageReceptionEvent,
  MessagesStreamSubjects,
  RECEPTION_BATCH_MAX_EVENTS,
} from '@envoi/contracts-messages';
import { boundedBatches, type OutboxEntry, outboxEntry } from '@envoi/shared-outbox';

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

/** The events by account, each account's in order, the accounts in the order they first come. */
function byAccount(events: readonly MessageReceptionEvent[]): MessageReceptionEvent[][] {
  const accounts = new Map<string, MessageReceptionEvent[]>();
  for (const event of events) {
    const own = accounts.get(event.data.account_id);
    if (own) own.push(event);
    else accounts.set(event.data.account_id, [event]);
  }
  return [...accounts.values()];
}

/**
 * The outbox rows of the `message.reception` events of the sends committed together (one send's,
 * or a group commit's): as few `message.reception_batch` stream messages as the limits allow,
 * one account's events each (the batch names it), in order. A batch's timestamp is its first
 * event's; each event keeps its own (its send's acceptance).
 */
export function receptionBatchEntries(events: readonly MessageReceptionEvent[]): OutboxEntry[] {
  return byAccount(events)
    .flatMap((own) =>
      boundedBatches(
        own,
        { maxItems: RECEPTION_BATCH_MAX_EVENTS, maxBytes: BATCH_MAX_ESTIMATED_BYTES },
        estimatedBytes,
      ),
    )
    .map((batch) => {
      const id = randomUUID();
      const [first] = batch;
      if (!first) throw new Error('a reception batch has events');
      return outboxEntry(MessagesStreamSubjects.receptionBatch, id, {
        id,
        type: 'message.reception_batch',
        timestamp: first.timestamp,
        data: { account_id: first.data.account_id, events: batch },
      });
    });
}
