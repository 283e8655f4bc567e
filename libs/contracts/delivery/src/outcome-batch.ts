import type { DeliveryOutcomeBatchEvent } from './events';

/** The type of the stream events that carry delivery events in `data.events`. */
export const OUTCOME_BATCH_TYPE: DeliveryOutcomeBatchEvent['type'] = 'message.outcome_batch';
