import { randomUUID } from 'node:crypto';

import {
  type DeliveryOutcomeBatchEvent,
  OUTCOME_BATCH_MAX_EVENTS,
} from '@envoi/contracts-delivery';

import type { StreamEvent } from './webhook-bench-events';

/*
 * The stream messages `npm run bench:webhooks` publishes to Envoi: its events in
 * `message.outcome_batch`es, as the delivery service forms them at the rate they come at. Only
 * the Envoi block reads this file (the contracts it loads need reflect-metadata).
 */

/**
 * How often the delivery service's attempt lane records a batch of outcomes under load: one
 * statement after the other, each taking the outcomes that ended while the previous one ran.
 * `npm run bench:delivery` found 2.5 outcome events per stream message at 360 delivered messages
 * a second (backlog case), one statement about every 7 ms.
 */
const LANE_STATEMENT_MS = 7;

/** The events one `message.outcome_batch` carries when outcomes are recorded at this rate. */
export function eventsPerBatchAt(eventsPerSecond: number): number {
  const events = Math.round((eventsPerSecond * LANE_STATEMENT_MS) / 1000);
  return Math.min(OUTCOME_BATCH_MAX_EVENTS, Math.max(1, events));
}

/** The events in one `message.outcome_batch`, as the delivery service publishes them. */
export function outcomeBatch(events: StreamEvent[]): DeliveryOutcomeBatchEvent {
  return {
    id: randomUUID(),
    type: 'message.outcome_batch',
    timestamp: new Date().toISOString(),
    data: { events },
  };
}
