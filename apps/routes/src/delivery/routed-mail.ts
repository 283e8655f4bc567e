import type { RoutedMailData } from '@envoi/contracts-routes';
import { UnprocessableMessageError } from '@envoi/shared-nats';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}

function isRecipient(value: unknown): value is RoutedMailData['recipients'][number] {
  return (
    isObject(value) &&
    typeof value['address'] === 'string' &&
    Array.isArray(value['route_ids']) &&
    value['route_ids'].every(isUuid)
  );
}

function isSpool(value: unknown): value is NonNullable<RoutedMailData['spool']> {
  return (
    isObject(value) &&
    typeof value['bucket'] === 'string' &&
    typeof value['name'] === 'string' &&
    typeof value['size'] === 'number' &&
    typeof value['sha256'] === 'string'
  );
}

/** Exactly one of the spool or the inline bytes (base64, of the message's size). */
function hasTheBytes(data: Record<string, unknown>): boolean {
  const { spool, raw, size } = data;
  if (raw === undefined) return isSpool(spool);
  return (
    spool === undefined &&
    typeof raw === 'string' &&
    typeof size === 'number' &&
    Buffer.byteLength(raw, 'base64') === size
  );
}

/**
 * The data of an `inbound.routed` stream event, checked field by field as the routes service
 * uses them; an event that can never be handled is unprocessable (a dead letter), not retried.
 */
export function toRoutedMail(event: unknown): RoutedMailData {
  const envelope = isObject(event) ? event : {};
  const what = `event ${String(envelope['id'])}`;
  if (envelope['type'] !== 'inbound.routed') {
    throw new UnprocessableMessageError(
      `${what} is not inbound.routed: ${String(envelope['type'])}`,
    );
  }
  const data = envelope['data'];
  if (!isObject(data)) throw new UnprocessableMessageError(`${what}: no data`);
  const problems = [
    isUuid(data['inbound_id']) ? null : 'inbound_id',
    isUuid(data['account_id']) ? null : 'account_id',
    typeof data['received_at'] === 'string' && !Number.isNaN(Date.parse(data['received_at']))
      ? null
      : 'received_at',
    hasTheBytes(data) ? null : 'spool or raw',
    Array.isArray(data['recipients']) && data['recipients'].every(isRecipient)
      ? null
      : 'recipients',
  ].filter((problem) => problem !== null);
  if (problems.length > 0) {
    throw new UnprocessableMessageError(`${what}: bad ${problems.join(', ')}`);
  }
  return data as unknown as RoutedMailData;
}
