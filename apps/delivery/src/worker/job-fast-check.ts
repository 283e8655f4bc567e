import {
  type AnyDeliveryJob,
  DELIVERY_JOB_MAX_MESSAGES,
  type DeliveryBatchJob,
  type DeliveryJob,
} from '@envoi/contracts-messages';
import { isUUID } from 'class-validator';

type Fields = Readonly<Record<string, unknown>>;

function isFields(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isUuidText(value: unknown): value is string {
  return typeof value === 'string' && isUUID(value);
}

function isMessageIds(value: unknown): value is string[] {
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.length <= DELIVERY_JOB_MAX_MESSAGES &&
    value.every(isUuidText)
  );
}

/**
 * A delivery job checked by hand with the checks of its contract class (DeliveryJobPayload or
 * DeliveryBatchJobPayload: the same UUID test, stricter elsewhere) and only its fields kept.
 * Undefined when any check fails: the caller then validates against the class, which says why.
 * Jobs as the services publish them pass here, at a fraction of the class validation's cost
 * (every one-message job is decoded on its own).
 */
export function fastDeliveryJob(payload: unknown): AnyDeliveryJob | undefined {
  if (!isFields(payload)) return undefined;
  const { account_id, attempt } = payload;
  if (typeof account_id !== 'string') return undefined;
  if ('message_ids' in payload) {
    const message_ids = payload['message_ids'];
    if (attempt !== 1 || !isMessageIds(message_ids)) return undefined;
    const job: DeliveryBatchJob = { message_ids, account_id, attempt };
    return job;
  }
  const message_id = payload['message_id'];
  if (!isUuidText(message_id)) return undefined;
  if (typeof attempt !== 'number' || !Number.isInteger(attempt) || attempt < 1) return undefined;
  const job: DeliveryJob = { message_id, account_id, attempt };
  return job;
}
