import { createHash } from 'node:crypto';

import type { StreamSubject } from '@envoi/contracts-core';
import { INBOUND_SPOOL_BUCKET, type InboundSpoolRef } from '@envoi/contracts-routes';
import { putNewUpload } from '@envoi/shared-nats';
import { StreamPublisher } from '@envoi/shared-outbox';
import type { NatsConnection } from 'nats';

/** How an event relies on the spool of its message. */
export type SpoolUse =
  /** It names none (`message.reception`, a routed message carried in its event). */
  | 'none'
  /** Its consumer waits for the spool it names (the routes intake): it goes out with the spool. */
  | 'awaited'
  /** Its consumer reads the spool at once (bounces, complaints): it goes out once it is stored. */
  | 'read_at_once';

/** A stream event ready to publish: its subject and the event (whose id is its Nats-Msg-Id). */
export interface InboundPublication {
  subject: string;
  stream: string;
  event: { id: string; type: string; timestamp: string; data: unknown };
  spool: SpoolUse;
}

const encoder = new TextEncoder();

/**
 * Where received mail becomes durable: the raw bytes in the inbound spool bucket (file storage,
 * expiring after the TTL) and the events on the EVENTS stream, each acknowledged by JetStream.
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

  /** Where `bytes` will be spooled as `inboundId`: known before they are, for the events. */
  refOf(inboundId: string, bytes: Uint8Array): InboundSpoolRef {
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    return { bucket: INBOUND_SPOOL_BUCKET, name: inboundId, size: bytes.length, sha256 };
  }

  /**
   * Stores the bytes `ref` names (its name a fresh uuid: there is never an earlier object of that
   * name to replace); rejects when the stored object is not the one `ref` describes.
   */
  async store(ref: InboundSpoolRef, bytes: Uint8Array): Promise<void> {
    const stored = await putNewUpload(this.connection, ref.bucket, ref.name, bytes, this.ttlMs);
    if (stored.size !== ref.size || stored.sha256 !== ref.sha256) {
      throw new Error(`spooled inbound ${ref.name} is not the object its events name`);
    }
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
  spool: SpoolUse,
): InboundPublication {
  return { subject: subject.name, stream: subject.stream, event, spool };
}
