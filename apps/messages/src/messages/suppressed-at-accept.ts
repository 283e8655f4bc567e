import { randomUUID } from 'node:crypto';

import {
  MessagesStreamSubjects,
  type MessageSuppressedAtAcceptEvent,
} from '@envoi/contracts-messages';
import { outboxBatchEntry, type OutboxEntry } from '@envoi/shared-outbox';

import { messageIdHeader, uuidv7 } from './message-ids';

/** What a send says about the recipients it named that are suppressed. */
export interface SuppressedRecipients {
  accountId: string;
  /** The sending domain, which the generated Message-ID names. */
  domain: string;
  /** The sender's address. */
  from: string;
  /** The send's subject as given (not rendered for recipients that get no message). */
  subject: string;
  /** The suppressed recipients' addresses as given, one per recipient entry. */
  recipients: readonly string[];
  now: Date;
}

/**
 * One outbox row (a batch, like the reception events) with a `message.suppressed` per suppressed
 * recipient, or none. Nothing is stored for these recipients: each event gets a fresh message id
 * and Message-ID, as a message to them would have had.
 */
export function suppressedAtAcceptEntries(send: SuppressedRecipients): OutboxEntry[] {
  if (send.recipients.length === 0) return [];
  const timestamp = send.now.toISOString();
  const events = send.recipients.map((recipient): MessageSuppressedAtAcceptEvent => {
    const id = uuidv7(send.now.getTime());
    return {
      id: randomUUID(),
      type: 'message.suppressed',
      timestamp,
      data: {
        account_id: send.accountId,
        event: 'on_suppressed',
        from: send.from,
        recipient,
        subject: send.subject,
        message_id_header: messageIdHeader(id, send.domain),
        id,
        is_bot: false,
      },
    };
  });
  return [outboxBatchEntry(MessagesStreamSubjects.suppressedAtAccept, randomUUID(), events)];
}
