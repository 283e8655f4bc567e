import type { MessageSummaryRecord } from '@envoi/contracts-messages';

import type { MessageEntity } from './message.entity';

/** The contract's MessageSummary of a message. */
export function toMessageSummary(message: MessageEntity): MessageSummaryRecord {
  return {
    object: 'message',
    id: message.id,
    message_id: message.messageIdHeader,
    created_at: message.createdAt.toISOString(),
    updated_at: message.updatedAt.toISOString(),
    sent_at: message.sentAt?.toISOString() ?? null,
    delivered_at: message.deliveredAt?.toISOString() ?? null,
    retain_until: message.retainUntil.toISOString(),
    // Inbound mail and bounce notifications are stored by the routes and delivery work to come.
    direction: 'outbound',
    is_bounce_notification: false,
    bounce_classification: message.bounceClassification ?? '',
    delivery_attempts: message.deliveryAttempts,
    subject: message.subject,
    tags: message.tags,
    sender: message.sender,
    recipient: message.recipient,
    status: message.status,
    num_attempts: message.numAttempts,
    click_count: message.clickCount,
    open_count: message.openCount,
    reference_message_id: null,
    domain_id: message.domainId,
    account_id: message.accountId,
  };
}
