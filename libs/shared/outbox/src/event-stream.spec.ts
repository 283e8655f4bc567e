import { DELIVERY_STREAM, EVENTS_STREAM } from '@envoi/contracts-core';

import { deliveryStreamDefinition, eventsStreamDefinition } from './event-stream';
import { DEFAULT_OUTBOX_RELAY_OPTIONS } from './outbox-relay';

describe('eventsStreamDefinition', () => {
  it('captures every events.* subject, keeps events a week and deduplicates for ten minutes', () => {
    expect(eventsStreamDefinition()).toEqual({
      name: EVENTS_STREAM,
      subjects: ['events.>'],
      maxAgeMs: 7 * 24 * 3_600_000,
      duplicateWindowMs: 600_000,
      replicas: 1,
    });
  });

  it('takes overrides for the limits, never for the name or subjects', () => {
    expect(eventsStreamDefinition({ replicas: 3, maxAgeMs: 1_000 })).toMatchObject({
      name: 'EVENTS',
      replicas: 3,
      maxAgeMs: 1_000,
    });
  });
});

describe('deliveryStreamDefinition', () => {
  it('is a work queue of delivery jobs that outlives every schedule and retry window', () => {
    expect(deliveryStreamDefinition()).toEqual({
      name: DELIVERY_STREAM,
      subjects: ['delivery.jobs.v1'],
      maxAgeMs: 14 * 24 * 3_600_000,
      duplicateWindowMs: 600_000,
      replicas: 1,
      retention: 'workqueue',
    });
  });

  it('takes overrides for the limits only', () => {
    expect(deliveryStreamDefinition({ replicas: 3 })).toMatchObject({
      name: 'DELIVERY',
      replicas: 3,
      retention: 'workqueue',
    });
  });
});

describe('DEFAULT_OUTBOX_RELAY_OPTIONS', () => {
  it('bounds every run', () => {
    const options = DEFAULT_OUTBOX_RELAY_OPTIONS;
    expect(options.batchSize * options.maxBatchesPerRun).toBeLessThanOrEqual(10_000);
    expect(options.publishTimeoutMs).toBeGreaterThan(0);
    // A republished event must still be within the stream's duplicate window.
    expect(options.publishTimeoutMs * options.batchSize).toBeLessThan(
      eventsStreamDefinition().duplicateWindowMs,
    );
  });
});
