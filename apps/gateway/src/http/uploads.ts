import type { MessageRecord, ParsedContentRecord, UploadRef } from '@envoi/contracts-messages';
import { INLINE_PAYLOAD_MAX_BYTES, MESSAGE_UPLOADS_BUCKET } from '@envoi/contracts-messages';
import { NATS_CONNECTION, putUpload, takeUpload } from '@envoi/shared-nats';
import { Inject, Injectable } from '@nestjs/common';
import type { NatsConnection } from 'nats';

/** Uploads live this long at most; the messages service deletes them once read. */
const UPLOAD_TTL_MS = 60 * 60 * 1000;

/**
 * A send body travels inline in the RPC payload when small, and through the JetStream object
 * store when it would not fit a NATS message (attachments can be tens of MB).
 */
export type SendPayload<Body> = { body: Body } | { upload: UploadRef };

@Injectable()
export class SendPayloads {
  constructor(@Inject(NATS_CONNECTION) private readonly connection: NatsConnection) {}

  async prepare<Body>(body: Body, requestId: string): Promise<SendPayload<Body>> {
    const json = JSON.stringify(body);
    if (Buffer.byteLength(json, 'utf8') <= INLINE_PAYLOAD_MAX_BYTES) return { body };
    const upload = await putUpload(
      this.connection,
      MESSAGE_UPLOADS_BUCKET,
      requestId,
      Buffer.from(json, 'utf8'),
      UPLOAD_TTL_MS,
    );
    return { upload };
  }
}

/** The downloaded form of a message's content (MessageRecord.content_download). */
interface ContentDownload {
  content: string | null;
  content_parsed: ParsedContentRecord | null;
}

/**
 * A message's content travels inline in the RPC reply when small, and through the JetStream
 * object store when not; either way the client receives it inline.
 */
@Injectable()
export class MessageContents {
  constructor(@Inject(NATS_CONNECTION) private readonly connection: NatsConnection) {}

  async inline(record: MessageRecord): Promise<MessageRecord> {
    const { content_download: download, ...rest } = record;
    if (download === undefined) return rest;
    const fetched = JSON.parse(
      (await takeUpload(this.connection, download)).toString('utf8'),
    ) as ContentDownload;
    return { ...rest, content: fetched.content, content_parsed: fetched.content_parsed };
  }
}
