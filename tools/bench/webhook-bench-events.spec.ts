import { randomUUID } from 'node:crypto';

import { decodeDeliveryOutcomeEvent } from '@envoi/contracts-delivery';

import { streamEvent } from './webhook-bench-events';

describe('the benchmark events', () => {
  it('are delivery events the messages and suppressions services can decode', () => {
    const event = streamEvent(randomUUID(), 'hooks0.bench.example', 7);

    const decoded = decodeDeliveryOutcomeEvent(event);

    expect(decoded.ok ? decoded.event.id : decoded.message).toBe(event.id);
  });
});
