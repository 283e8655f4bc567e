import type { StreamSubject } from '@envoi/contracts-core';
import { INBOUND_SPOOL_BUCKET, type InboundSpoolRef } from '@envoi/contracts-routes';
import { ensureUploadBucket, putNewUpload } from '@envoi/shared-nats';
import { StreamPublisher } from '@envoi/shared-outbox';
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
 * A publication sent again with the same id is dropped by the stream as a duplicate. Events go
 * out with reply subjects on the spool's own subscription (no request per event).
 */
export class InboundSpool {
  private readonly publisher: StreamPublisher;

  constructor(
    private readonly connection: NatsConnection,
    private readonly ttlMs: number,
    private readonly publishTimeoutMs: number,
  ) {
    this.publisher = new StreamPublisher(connection);
  }

  /** `inboundId` is a fresh uuid: there is never an earlier object of that name to replace. */
  store(inboundId: string, bytes: Uint8Array): Promise<InboundSpoolRef> {
    return putNewUpload(this.connection, INBOUND_SPOOL_BUCKET, inboundId, bytes, this.ttlMs);
  }

  /** Deletes a spooled message no event names (a refused one); the bucket's TTL is the fallback. */
  async discard(ref: InboundSpoolRef): Promise<void> {
    const store = await ensureUploadBucket(this.connection, ref.bucket, this.ttlMs);
    await store.delete(ref.name);
  }

  /** Resolves once the stream stored the event (or dropped it as a duplicate). */
  async publish(publication: InboundPublication): Promise<void> {
    const [outcome] = await this.publisher.publishAll(
      [
        {
          subject: publication.subject,
          data: encoder.encode(JSON.stringify(publication.event)),
          msgId: publication.event.id,
          stream: publication.stream,
        },
      ],
      this.publishTimeoutMs,
    );
    if (outcome?.status === 'rejected') throw outcome.reason;
  }
}

export function publicationOf<E extends InboundPublication['event']>(
  subject: StreamSubject<E>,
  event: E,
): InboundPublication {
  return { subject: subject.name, stream: subject.stream, event };
}
