import type { StreamEvent, StreamEventOf, StreamSubject } from '@envoi/contracts-core';
import type { EntityManager } from 'typeorm';

import { OutboxMessageEntity } from './outbox-message.entity';

/**
 * Records a durable event inside the caller's transaction: it is published if and only if the
 * transaction commits. The event's id becomes its `Nats-Msg-Id`.
 */
export async function enqueueEvent<S extends StreamSubject<StreamEvent<string, unknown>>>(
  manager: EntityManager,
  subject: S,
  event: StreamEventOf<S>,
): Promise<void> {
  await manager.insert(OutboxMessageEntity, {
    id: event.id,
    subject: subject.name,
    payload: event,
    publishedAt: null,
    failedAttempts: 0,
    lastError: null,
  });
}
