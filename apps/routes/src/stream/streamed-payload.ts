import type { MessageRoutingPayload, RoutingAttachmentRecord } from '@envoi/contracts-routes';

import { plannedCallDigest } from '../delivery/delivery-plan';

/** An attachment as a route stream shows it: its metadata and decoded size, never its bytes. */
export type StreamedAttachment = Omit<RoutingAttachmentRecord, 'data'> & { size: number };

export type StreamedRoutingPayload = Omit<MessageRoutingPayload, 'data'> & {
  data: Omit<MessageRoutingPayload['data'], 'attachments'> & { attachments?: StreamedAttachment[] };
};

/**
 * The payload a route stream carries (platform notes 1.12: route attachment bytes are not
 * streamed): the route's payload with each attachment's `data` replaced by its decoded `size`.
 */
export function withoutAttachmentBytes(payload: MessageRoutingPayload): StreamedRoutingPayload {
  const { attachments, ...data } = payload.data;
  if (attachments === undefined) return { ...payload, data };
  return {
    ...payload,
    data: {
      ...data,
      attachments: attachments.map((attachment) => ({
        filename: attachment.filename,
        content_type: attachment.content_type,
        content_id: attachment.content_id,
        disposition: attachment.disposition,
        size: Buffer.byteLength(attachment.data, 'base64'),
      })),
    },
  };
}

/**
 * The id of a routed message's event on a route's stream (its frame's `webhook-id`): the same
 * for the same message, route and recipients, so a redelivered message is buffered once.
 */
export function streamEventId(inboundId: string, routeId: string, recipients: readonly string[]) {
  return `msg_${plannedCallDigest(inboundId, routeId, recipients).slice(0, 32)}`;
}
