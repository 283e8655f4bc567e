import { randomUUID } from 'node:crypto';

import { type AnyDeliveryJob, DELIVERY_JOB_MAX_MESSAGES } from '@envoi/contracts-messages';

/** One first-attempt delivery job: its id (the outbox row id, its `Nats-Msg-Id`) and messages. */
export interface DeliveryChunk {
  id: string;
  messageIds: string[];
}

/** A send's messages cut into delivery jobs, and which job each message belongs to. */
export interface DeliveryChunks {
  jobs: DeliveryChunk[];
  jobIdOf(messageId: string): string;
}

/** One job per DELIVERY_JOB_MAX_MESSAGES messages of a send, in their order. */
export function deliveryChunks(
  messageIds: readonly string[],
  size: number = DELIVERY_JOB_MAX_MESSAGES,
): DeliveryChunks {
  const jobs: DeliveryChunk[] = [];
  const jobOf = new Map<string, string>();
  for (let start = 0; start < messageIds.length; start += size) {
    const chunk = { id: randomUUID(), messageIds: messageIds.slice(start, start + size) };
    jobs.push(chunk);
    for (const messageId of chunk.messageIds) jobOf.set(messageId, chunk.id);
  }
  return {
    jobs,
    jobIdOf(messageId) {
      const jobId = jobOf.get(messageId);
      if (jobId === undefined) throw new Error(`${messageId} is in no delivery job`);
      return jobId;
    },
  };
}

/** The job of a chunk's first attempt: a single message keeps the one-message shape. */
export function firstDeliveryJob(messageIds: string[], accountId: string): AnyDeliveryJob {
  const [only] = messageIds;
  if (messageIds.length === 1 && only !== undefined) {
    return { message_id: only, account_id: accountId, attempt: 1 };
  }
  return { message_ids: messageIds, account_id: accountId, attempt: 1 };
}
