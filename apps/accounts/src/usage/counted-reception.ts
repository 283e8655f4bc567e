import { UnprocessableMessageError } from '@envoi/shared-nats';
import { isUUID } from 'class-validator';

/** What counting one message's reception needs. */
export interface CountedReception {
  /** The message's id: a message is counted once, however often its event arrives. */
  messageId: string;
  accountId: string;
  /** When it was accepted: decides its billing period. */
  receivedAt: Date;
}

/**
 * The countable receptions of a `message.send_receptions` stream event (one per message of the
 * send); an event that can never be counted (wrong type, bad fields) is unprocessable, not retried.
 */
export function toCountedReceptions(event: unknown): CountedReception[] {
  const envelope = (typeof event === 'object' && event !== null ? event : {}) as {
    id?: unknown;
    type?: unknown;
    timestamp?: unknown;
    data?: { account_id?: unknown; message_ids?: unknown };
  };
  const what = `event ${String(envelope.id)}`;
  if (envelope.type !== 'message.send_receptions') {
    throw new UnprocessableMessageError(
      `${what} is not message.send_receptions: ${String(envelope.type)}`,
    );
  }
  const accountId = envelope.data?.account_id;
  if (typeof accountId !== 'string' || !isUUID(accountId)) {
    throw new UnprocessableMessageError(`${what}: data.account_id is not a uuid`);
  }
  const messageIds = envelope.data?.message_ids;
  if (!Array.isArray(messageIds) || messageIds.length === 0) {
    throw new UnprocessableMessageError(`${what}: data.message_ids is not a list of message ids`);
  }
  const receivedAt = new Date(typeof envelope.timestamp === 'string' ? envelope.timestamp : NaN);
  if (Number.isNaN(receivedAt.getTime())) {
    throw new UnprocessableMessageError(`${what}: timestamp is not a time`);
  }
  return messageIds.map((messageId: unknown, index) => {
    if (typeof messageId !== 'string' || !isUUID(messageId)) {
      throw new UnprocessableMessageError(`${what}: data.message_ids[${index}] is not a uuid`);
    }
    return { messageId, accountId, receivedAt };
  });
}
