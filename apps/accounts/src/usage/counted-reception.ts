import { UnprocessableMessageError } from '@envoi/shared-nats';
import { isUUID } from 'class-validator';

/** What counting a `message.reception` event needs. */
export interface CountedReception {
  /** The message's id: a message is counted once, however often its event arrives. */
  messageId: string;
  accountId: string;
  /** When it was accepted: decides its billing period. */
  receivedAt: Date;
}

/**
 * The countable part of a `message.reception` stream event; an event that can never be counted
 * (wrong type, bad fields) is unprocessable, not retried.
 */
export function toCountedReception(event: unknown): CountedReception {
  const envelope = (typeof event === 'object' && event !== null ? event : {}) as {
    id?: unknown;
    type?: unknown;
    timestamp?: unknown;
    data?: { id?: unknown; account_id?: unknown };
  };
  const what = `event ${String(envelope.id)}`;
  if (envelope.type !== 'message.reception') {
    throw new UnprocessableMessageError(
      `${what} is not message.reception: ${String(envelope.type)}`,
    );
  }
  const messageId = envelope.data?.id;
  const accountId = envelope.data?.account_id;
  if (typeof messageId !== 'string' || !isUUID(messageId)) {
    throw new UnprocessableMessageError(`${what}: data.id is not a uuid`);
  }
  if (typeof accountId !== 'string' || !isUUID(accountId)) {
    throw new UnprocessableMessageError(`${what}: data.account_id is not a uuid`);
  }
  const receivedAt = new Date(typeof envelope.timestamp === 'string' ? envelope.timestamp : NaN);
  if (Number.isNaN(receivedAt.getTime())) {
    throw new UnprocessableMessageError(`${what}: timestamp is not a time`);
  }
  return { messageId, accountId, receivedAt };
}
