import {
  type DeliverySendRecord,
  type DeliveryView,
  type DeliveryViewsV2,
  INLINE_PAYLOAD_MAX_BYTES,
  type StoredObjectRecord,
} from '@envoi/contracts-messages';
import { toRecipientPartRecord, toSourcesRecord } from '@envoi/shared-composition';

import type { DeliveryMessage } from './delivery-view-reads';
import { recipientPartOf } from './message-contents.service';
import type { SendContent } from './sends.repository';

/** What the reply reads and stores, each once per send (or per legacy message). */
export interface DeliveryReplyReads {
  /** The send's sources, or its raw bytes when submitted over SMTP; undefined once purged. */
  content(sendId: string): Promise<SendContent | undefined>;
  /** A message stored before sends were: its raw bytes, null once purged. */
  raw(messageId: string): Promise<Buffer | null>;
  /** Stores a send's sources (JSON) in the downloads bucket. */
  upload(sendId: string, bytes: Buffer): Promise<StoredObjectRecord>;
}

/** What `,"content_base64":""` adds to a view's JSON around the content itself. */
const CONTENT_FIELD_BYTES = 20;
/** What `,"submitted":true` adds to a view's JSON. */
export const SUBMITTED_FIELD_BYTES = 17;
/** What `,"composition":` adds to a view's JSON. */
const COMPOSITION_FIELD_BYTES = 15;

/** Bytes of the base64 form of `size` bytes. */
export function base64Length(size: number): number {
  return 4 * Math.ceil(size / 3);
}

/**
 * The DeliveryViewsV2 reply of `messages` (their bare views in `bare`): each send's sources once,
 * inline while the reply stays within INLINE_PAYLOAD_MAX_BYTES, otherwise through the downloads
 * bucket; each message of a send with its recipient part. A legacy message's raw bytes go inline
 * while they fit, otherwise its id goes to `separately`, as does a message whose part does not fit.
 */
export async function deliveryViewsReply(
  messages: readonly DeliveryMessage[],
  bare: readonly DeliveryView[],
  reads: DeliveryReplyReads,
): Promise<DeliveryViewsV2> {
  const ids = messages.map((message) => message.id);
  // Room left with every view bare and every id listed as separate, the most either takes.
  let room =
    INLINE_PAYLOAD_MAX_BYTES -
    Buffer.byteLength(JSON.stringify({ views: bare, sends: [], separately: ids }));
  const sends = new Map<string, DeliverySendRecord | null>();
  const views: DeliveryView[] = [];
  const separately: string[] = [];

  // Each send read once: a submitted send's raw bytes, or its sources' record.
  const submitted = new Map<string, Buffer>();
  const sendRecord = async (sendId: string): Promise<DeliverySendRecord | Buffer | null> => {
    const raw = submitted.get(sendId);
    if (raw) return raw;
    const known = sends.get(sendId);
    if (known !== undefined) return known;
    const sources = await reads.content(sendId);
    if (Buffer.isBuffer(sources)) {
      submitted.set(sendId, sources);
      return sources;
    }
    let record: DeliverySendRecord | null = null;
    if (sources) {
      const inline: DeliverySendRecord = { id: sendId, sources: toSourcesRecord(sources) };
      const inlineBytes = Buffer.byteLength(JSON.stringify(inline)) + 1;
      if (inlineBytes <= room) {
        record = inline;
      } else {
        const json = Buffer.from(JSON.stringify(inline.sources));
        record = { id: sendId, sources_download: await reads.upload(sendId, json) };
      }
      room -= Buffer.byteLength(JSON.stringify(record)) + 1;
    }
    sends.set(sendId, record);
    return record;
  };

  /** A message sent as stored bytes: inline while they fit, else read alone. */
  const rawView = (
    message: DeliveryMessage,
    view: DeliveryView,
    raw: Buffer | null,
    submitted: boolean,
  ): void => {
    if (raw === null) {
      views.push(view);
      return;
    }
    const inlineBytes =
      base64Length(raw.length) + CONTENT_FIELD_BYTES + (submitted ? SUBMITTED_FIELD_BYTES : 0);
    if (inlineBytes > room) {
      separately.push(message.id);
      return;
    }
    room -= inlineBytes;
    const marked = submitted ? { ...view, submitted } : view;
    views.push({ ...marked, content_base64: raw.toString('base64') });
  };

  for (const [index, message] of messages.entries()) {
    const view = bare[index];
    if (!view) continue;
    if (message.sendId === null) {
      rawView(message, view, await reads.raw(message.id), false);
      continue;
    }
    const send = message.contentPurgedAt === null ? await sendRecord(message.sendId) : null;
    if (Buffer.isBuffer(send)) {
      rawView(message, view, send, true);
      continue;
    }
    if (!send) {
      views.push(view);
      continue;
    }
    const composition = toRecipientPartRecord(message.sendId, recipientPartOf(message));
    const partBytes = Buffer.byteLength(JSON.stringify(composition)) + COMPOSITION_FIELD_BYTES;
    if (partBytes > room) {
      separately.push(message.id);
      continue;
    }
    room -= partBytes;
    views.push({ ...view, composition });
  }
  const sendRecords = [...sends.values()].filter((send) => send !== null);
  return { views, sends: sendRecords, separately };
}
