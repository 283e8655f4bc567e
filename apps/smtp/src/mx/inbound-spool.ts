import type { StreamSubject } from '@envoi/contracts-core';
import { INBOUND_SPOOL_BUCKET, type InboundSpoolRef } from '@envoi/contracts-routes';
import { ensureUploadBucket, putNewUpload } from '@envoi/shared-nats';
import type { NatsConnection } from 'nats';

/** A stream event ready to publish: its subject and the event (whose id is its Nats-Msg-Id). */
export interface InboundPublication {
  subject: string;
  stream: string;
  event: { id: string; type: string; timestamp: string; data: unknown };
}

const encoder = new TextEncoder();

/**
 * Where received mail becomes durable: the raw bytes in the inbound spool bucket (file storage,
 * expiring after the TTL), then the events on the EVENTS stream, each acknowledged by JetStream.
 * A publication sent again with the same id is dropped by the stream as a duplicate.
 */
export class InboundSpool {
  constructor(
    private readonly connection: NatsConnection,
    private readonly ttlMs: number,
    private readonly publishTimeoutMs: number,
  ) {}

  /** `inboundId` is a fresh uuid: there is never an earlier object of that name to replace. */
  store(inboundId: string, bytes: Uint8Array): Promise<InboundSpoolRef> {
    return putNewUpload(this.connection, INBOUND_SPOOL_BUCKET, inboundId, bytes, this.ttlMs);
  }

  /** Deletes a spooled message no event names (a refused one); the bucket's TTL is the fallback. */
  async discard(ref: InboundSpoolRef): Promise<void> {
    const store = await ensureUploadBucket(this.connection, ref.bucket, this.ttlMs);
    await store.delete(ref.name);
  }

  async publish(publication: InboundPublication): Promise<void> {
    await this.connection
      .jetstream()
      .publish(publication.subject, encoder.encode(JSON.stringify(publication.event)), {
        msgID: publication.event.id,
        expect: { streamName: publication.stream },
        timeout: this.publishTimeoutMs,
      });
  }
}

export function publicationOf<E extends InboundPublication['event']>(
  subject: StreamSubject<E>,
  event: E,
): InboundPublication {
  return { subject: subject.name, stream: subject.stream, event };
}
