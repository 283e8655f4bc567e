import type { EventSubject } from '@envoi/contracts-core';
import type { NatsConnection, Subscription } from 'nats';

import { decodePacket, type NestEventPacket } from './nest-packet';

/**
 * Subscribes every replica to an event (no queue group), for cache invalidation and the like.
 * A handler's failure is reported and never stops the subscription.
 */
export function subscribeBroadcast<E>(
  connection: NatsConnection,
  subject: EventSubject<E>,
  handler: (event: E) => void,
  onError: (error: unknown) => void,
): Subscription {
  return connection.subscribe(subject.name, {
    callback: (error, message) => {
      if (error) return onError(error);
      try {
        handler(decodePacket<NestEventPacket<E>>(message.data).data);
      } catch (handlerError) {
        onError(handlerError);
      }
    },
  });
}
