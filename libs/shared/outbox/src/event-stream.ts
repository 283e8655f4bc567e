import {
  DELIVERY_STREAM,
  DELIVERY_STREAM_SUBJECTS,
  EVENTS_STREAM,
  EVENTS_STREAM_SUBJECTS,
} from '@envoi/contracts-core';
import {
  DiscardPolicy,
  type JetStreamManager,
  nanos,
  type NatsConnection,
  NatsError,
  RetentionPolicy,
  StorageType,
  type StreamConfig,
} from 'nats';

export interface StreamDefinition {
  name: string;
  subjects: readonly string[];
  /** How long events stay in the stream. */
  maxAgeMs: number;
  /** How long the stream remembers a `Nats-Msg-Id` to drop a duplicate publication. */
  duplicateWindowMs: number;
  replicas: number;
  /**
   * `limits` (default): messages stay until they age out, for any number of consumers.
   * `workqueue`: a message is removed once a consumer acknowledges it (one consumer per subject).
   */
  retention?: 'limits' | 'workqueue';
}

/** The stream of domain events every outbox relay publishes into. */
export function eventsStreamDefinition(
  overrides: Partial<Omit<StreamDefinition, 'name' | 'subjects'>> = {},
): StreamDefinition {
  return {
    name: EVENTS_STREAM,
    subjects: EVENTS_STREAM_SUBJECTS,
    maxAgeMs: overrides.maxAgeMs ?? 7 * 24 * 3_600_000,
    duplicateWindowMs: overrides.duplicateWindowMs ?? 10 * 60_000,
    replicas: overrides.replicas ?? 1,
  };
}

/**
 * The delivery work queue: jobs stay until a delivery worker acknowledges them (or for two weeks,
 * well beyond the longest schedule and retry window). The messages service's relay publishes
 * into it.
 */
export function deliveryStreamDefinition(
  overrides: Partial<Omit<StreamDefinition, 'name' | 'subjects' | 'retention'>> = {},
): StreamDefinition {
  return {
    name: DELIVERY_STREAM,
    subjects: DELIVERY_STREAM_SUBJECTS,
    maxAgeMs: overrides.maxAgeMs ?? 14 * 24 * 3_600_000,
    duplicateWindowMs: overrides.duplicateWindowMs ?? 10 * 60_000,
    replicas: overrides.replicas ?? 1,
    retention: 'workqueue',
  };
}

const STREAM_NOT_FOUND = 10059;
const STREAM_NAME_IN_USE = 10058;

function jsErrorCode(error: unknown): number | undefined {
  return error instanceof NatsError ? error.api_error?.err_code : undefined;
}

/**
 * Creates the stream when it is missing, or adds subjects it lacks; never removes anything, so
 * services of different versions can share it. Safe when several processes race to create it.
 */
export async function ensureStream(
  connection: NatsConnection,
  definition: StreamDefinition,
): Promise<void> {
  const jsm = await connection.jetstreamManager();
  if (await addMissingSubjects(jsm, definition)) return;
  const config: Partial<StreamConfig> = {
    name: definition.name,
    subjects: [...definition.subjects],
    storage: StorageType.File,
    retention:
      definition.retention === 'workqueue' ? RetentionPolicy.Workqueue : RetentionPolicy.Limits,
    discard: DiscardPolicy.Old,
    max_age: nanos(definition.maxAgeMs),
    duplicate_window: nanos(definition.duplicateWindowMs),
    num_replicas: definition.replicas,
  };
  try {
    await jsm.streams.add(config);
  } catch (error) {
    if (jsErrorCode(error) !== STREAM_NAME_IN_USE) throw error;
    await addMissingSubjects(jsm, definition);
  }
}

/** False when the stream does not exist. */
async function addMissingSubjects(
  jsm: JetStreamManager,
  definition: StreamDefinition,
): Promise<boolean> {
  let info;
  try {
    info = await jsm.streams.info(definition.name);
  } catch (error) {
    if (jsErrorCode(error) === STREAM_NOT_FOUND) return false;
    throw error;
  }
  const subjects = info.config.subjects ?? [];
  const missing = definition.subjects.filter((subject) => !subjects.includes(subject));
  if (missing.length > 0) {
    await jsm.streams.update(definition.name, {
      ...info.config,
      subjects: [...subjects, ...missing],
    });
  }
  return true;
}
