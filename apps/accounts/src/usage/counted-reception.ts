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

/** A stream event's envelope, its fields still unchecked. */
interface Envelope {
  id?: unknown;
  type?: unknown;
  timestamp?: unknown;
  data?: Record<string, unknown>;
}

function envelopeOf(event: unknown): Envelope {
  return typeof event === 'object' && event !== null ? event : {};
}

function accountIdOf(envelope: Envelope, what: string): string {
  const accountId = envelope.data?.['account_id'];
  if (typeof accountId !== 'string' || !isUUID(accountId)) {
    throw new UnprocessableMessageError(`${what}: data.account_id is not a uuid`);
  }
  return accountId;
}

function timeOf(envelope: Envelope, what: string): Date {
  const at = new Date(typeof envelope.timestamp === 'string' ? envelope.timestamp : NaN);
  if (Number.isNaN(at.getTime())) {
    throw new UnprocessableMessageError(`${what}: timestamp is not a time`);
  }
  return at;
}

function messageIdOf(value: unknown, what: string): string {
  if (typeof value !== 'string' || !isUUID(value)) {
    throw new UnprocessableMessageError(`${what} is not a uuid`);
  }
  return value;
}

/**
 * The countable receptions of a `message.send_receptions` event (one per message of the send),
 * as sends published them before their receptions were counted from reception batches.
 */
function sendReceptionsOf(envelope: Envelope, what: string): CountedReception[] {
  const accountId = accountIdOf(envelope, what);
  const messageIds = envelope.data?.['message_ids'];
  if (!Array.isArray(messageIds) || messageIds.length === 0) {
    throw new UnprocessableMessageError(`${what}: data.message_ids is not a list of message ids`);
  }
  const receivedAt = timeOf(envelope, what);
  return messageIds.map((messageId: unknown, index) => ({
    messageId: messageIdOf(messageId, `${what}: data.message_ids[${index}]`),
    accountId,
    receivedAt,
  }));
}

/**
 * The countable receptions of a `message.reception_batch` (one per event): each event's message,
 * account and timestamp (its send's acceptance), the events of several sends alike.
 */
function receptionBatchOf(envelope: Envelope, what: string): CountedReception[] {
  const events = envelope.data?.['events'];
  if (!Array.isArray(events) || events.length === 0) {
    throw new UnprocessableMessageError(`${what}: data.events is not a list of events`);
  }
  return events.map((event: unknown, index) => {
    const reception = envelopeOf(event);
    const where = `${what}: data.events[${index}]`;
    if (reception.type !== 'message.reception') {
      throw new UnprocessableMessageError(
        `${where} is not message.reception: ${String(reception.type)}`,
      );
    }
    return {
      messageId: messageIdOf(reception.data?.['id'], `${where}.data.id`),
      accountId: accountIdOf(reception, where),
      receivedAt: timeOf(reception, where),
    };
  });
}

/**
 * The countable receptions of a stream event that names accepted messages: a
 * `message.reception_batch` or a `message.send_receptions`. An event that can never be counted
 * (another type, bad fields) is unprocessable, not retried.
 */
export function toCountedReceptions(event: unknown): CountedReception[] {
  const envelope = envelopeOf(event);
  const what = `event ${String(envelope.id)}`;
  switch (envelope.type) {
    case 'message.reception_batch':
      return receptionBatchOf(envelope, what);
    case 'message.send_receptions':
      return sendReceptionsOf(envelope, what);
    default:
      throw new UnprocessableMessageError(
        `${what} is neither message.reception_batch nor message.send_receptions: ${String(envelope.type)}`,
      );
  }
}
