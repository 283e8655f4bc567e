import { randomUUID } from 'node:crypto';

import type { DeliveryOutcomeBatchEvent } from '@envoi/contracts-delivery';

import type { StreamEvent } from './webhook-bench-events';

/*
 * The stream messages `npm run bench:webhooks` publishes to Envoi: its events in
 * `message.outcome_batch`es, as the delivery service publishes them (and, for comparison, one event
 * to a stream message, as opens, clicks and one-recipient sends' receptions come). Only
 * the Envoi block reads this file (the contracts it loads need reflect-metadata).
 */

/**
 * The events one `message.outcome_batch` carries in the measured runs: fewer than the delivery
 * service forms at its own peak here (`npm run bench:delivery` counts 2.5 outcome events per
 * stream message at about 700 delivered messages a second, one attempt-lane statement about every
 * 3.5 ms). Its batches grow with the rate of outcomes, so this is the low side of what a replica
 * under load publishes.
 */
export const OUTCOME_EVENTS_PER_STREAM_MESSAGE = 2;

/** The events in one `message.outcome_batch`, as the delivery service publishes them. */
export function outcomeBatch(events: StreamEvent[]): DeliveryOutcomeBatchEvent {
  return {
    id: randomUUID(),
    type: 'message.outcome_batch',
    timestamp: new Date().toISOString(),
    data: { events },
  };
}
