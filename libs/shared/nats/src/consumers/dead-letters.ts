import { TRACE_HEADERS } from '@envoi/shared-observability';

/** A message a consumer gave up on: unprocessable, or failed on its last delivery. */
export interface DeadLetter {
  durable: string;
  stream: string;
  subject: string;
  payload: Uint8Array;
  /** All the message's headers, its trace context among them: a replay continues that trace. */
  headers: Record<string, string>;
  error: string;
  deliveries: number;
}

export interface StoredDeadLetter extends DeadLetter {
  id: string;
  failedAt: Date;
}

/** Where a service keeps its dead letters (a table of its own schema: see shared-outbox). */
export interface DeadLetterStore {
  record(letter: DeadLetter): Promise<void>;
  /** The most recent first. */
  list(limit: number): Promise<StoredDeadLetter[]>;
  find(id: string): Promise<StoredDeadLetter | undefined>;
  remove(id: string): Promise<void>;
}

export const DEAD_LETTER_STORE = Symbol('DEAD_LETTER_STORE');

/**
 * The operator's requests, answered by one replica of every service that keeps dead letters
 * (scatter-gather: each answer names its service).
 */
export const DEAD_LETTER_ADMIN_SUBJECTS = {
  list: 'admin.dead-letters.list',
  replay: 'admin.dead-letters.replay',
} as const;

/** A dead letter as the admin requests show it. */
export interface DeadLetterView {
  id: string;
  /** The request that published the message, to find its log lines. */
  request_id?: string;
  durable: string;
  subject: string;
  payload: string;
  error: string;
  deliveries: number;
  failed_at: string;
}

export interface DeadLetterListReply {
  service: string;
  dead_letters: DeadLetterView[];
}

export interface DeadLetterReplayReply {
  service: string;
  /** false: this service holds no dead letter with that id. */
  found: boolean;
  /** acked: handled, the dead letter is gone; otherwise it stays (error updated in the logs). */
  outcome?: 'acked' | 'retried' | 'terminated';
}

const decoder = new TextDecoder();

export function deadLetterView(letter: StoredDeadLetter): DeadLetterView {
  const requestId = letter.headers[TRACE_HEADERS.requestId];
  return {
    id: letter.id,
    ...(requestId ? { request_id: requestId } : {}),
    durable: letter.durable,
    subject: letter.subject,
    payload: decoder.decode(letter.payload),
    error: letter.error,
    deliveries: letter.deliveries,
    failed_at: letter.failedAt.toISOString(),
  };
}
