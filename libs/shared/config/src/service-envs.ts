import { MicroserviceEnv } from './base-env';
import { IntSetting } from './setting-decorators';

/*
 * Settings groups that several services share, as base classes: a service's env class extends the
 * one that has the groups it uses. They form a chain (deploy checks in tools/deploy read `extends`
 * from the sources and follow class names only), so a service using both groups gets them from
 * OutboxEventConsumerServiceEnv, which declares the outbox settings a second time with the same
 * decorators and defaults, defined once below. A service that needs another default or bound for
 * one setting redeclares it as an `override` with all of its decorators (class-validator then
 * ignores the inherited constraints of that property).
 */

/** OUTBOX_RELAY_INTERVAL_MS: pause between runs of the relay that found nothing to publish. */
const OutboxRelayIntervalMs = (): PropertyDecorator => IntSetting(10, 60_000);
const OUTBOX_RELAY_INTERVAL_MS_DEFAULT = 1_000;

/** OUTBOX_RELAY_BATCH: outbox rows published per batch (one transaction). */
const OutboxRelayBatch = (): PropertyDecorator => IntSetting(1, 1_000);
const OUTBOX_RELAY_BATCH_DEFAULT = 100;

/** A service that publishes events (and jobs) through an outbox table and its relay. */
export abstract class OutboxServiceEnv extends MicroserviceEnv {
  @OutboxRelayIntervalMs() OUTBOX_RELAY_INTERVAL_MS: number = OUTBOX_RELAY_INTERVAL_MS_DEFAULT;
  @OutboxRelayBatch() OUTBOX_RELAY_BATCH: number = OUTBOX_RELAY_BATCH_DEFAULT;
}

/** A service with durable consumers of the JetStream `EVENTS` stream. */
export abstract class EventConsumerServiceEnv extends MicroserviceEnv {
  /** Events pulled at once from the EVENTS stream, per consumer. */
  @IntSetting(1, 256) EVENTS_BATCH: number = 32;

  /** An event not acknowledged this long after delivery is delivered again. */
  @IntSetting(1_000, 600_000) EVENTS_ACK_WAIT_MS: number = 30_000;

  /** First redelivery delay of an event whose handling failed; it doubles, up to one minute. */
  @IntSetting(10, 60_000) EVENTS_RETRY_MS: number = 1_000;
}

/** A service with durable `EVENTS` consumers that also publishes through an outbox. */
export abstract class OutboxEventConsumerServiceEnv extends EventConsumerServiceEnv {
  @OutboxRelayIntervalMs() OUTBOX_RELAY_INTERVAL_MS: number = OUTBOX_RELAY_INTERVAL_MS_DEFAULT;
  @OutboxRelayBatch() OUTBOX_RELAY_BATCH: number = OUTBOX_RELAY_BATCH_DEFAULT;
}
