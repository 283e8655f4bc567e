import type { NatsConnection } from 'nats';

/** A stream consumer loop, as readiness sees it. */
export interface ConsumerAttachment {
  /** Its durable name. */
  readonly name: string;
  /** Whether the loop has its consumer on the server and is pulling from it. */
  attached(): boolean;
}

const attachments = new WeakMap<NatsConnection, ConsumerAttachment[]>();

/** Declares a consumer loop running over `connection`, so that the service's readiness sees it. */
export function trackConsumer(connection: NatsConnection, consumer: ConsumerAttachment): void {
  const tracked = attachments.get(connection) ?? [];
  tracked.push(consumer);
  attachments.set(connection, tracked);
}

/** The consumer loops declared over `connection`, in the order they started. */
export function trackedConsumers(connection: NatsConnection): readonly ConsumerAttachment[] {
  return attachments.get(connection) ?? [];
}
