import { createHash } from 'node:crypto';

import {
  type BounceMailEvent,
  type FeedbackMailEvent,
  INBOUND_INLINE_MAX_BYTES,
  type InboundEnvelope,
  type InboundReceptionEvent,
  InboundStreamSubjects,
  type RoutedMailEvent,
} from '@envoi/contracts-routes';
import type { InboundHeadline } from '@envoi/shared-inbound-mail';

import { type InboundPublication, publicationOf } from './inbound-spool';

/** A recipient the MX accepted at RCPT, and what it is for. */
export type AcceptedRecipient =
  | { kind: 'bounce'; address: string; messageUuid: string }
  | { kind: 'feedback'; address: string }
  | { kind: 'routed'; address: string; accountId: string; routeIds: string[] };

/**
 * The id of one event of a received message, derived from the inbound id (a uuid shape), so that
 * publishing it again is dropped by the stream and consumers deduplicate on it.
 */
export function inboundEventId(inboundId: string, part: string): string {
  const hex = createHash('sha256').update(`${inboundId}/${part}`).digest('hex');
  const variant = ((parseInt(hex.slice(16, 18), 16) & 0x3f) | 0x80).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(18, 20)}-${hex.slice(20, 32)}`;
}

/**
 * The id each account knows a received message by: the first account whose routes take one of
 * its recipients keeps the inbound id (the one in the 250 reply), each other one gets its own id
 * derived from it, so that every account's copy is taken, routed and counted on its own.
 */
export function inboundIdsByAccount(
  inboundId: string,
  accountIds: readonly string[],
): Map<string, string> {
  return new Map(
    accountIds.map((accountId, index) => [
      accountId,
      index === 0 ? inboundId : inboundEventId(inboundId, `account/${accountId}`),
    ]),
  );
}

/** What `message.reception` says of a received message, from its header block. */
export interface ReceptionHeadline {
  from: string;
  subject: string;
  messageIdHeader: string;
}

export function receptionHeadline(
  headline: InboundHeadline,
  envelopeFrom: string,
): ReceptionHeadline {
  return {
    from: headline.from || envelopeFrom,
    subject: headline.subject,
    messageIdHeader: headline.messageId,
  };
}

/** The bytes a routed event carries (base64), or undefined when they are too many. */
export function inlineBytes(bytes: Buffer): string | undefined {
  return bytes.length <= INBOUND_INLINE_MAX_BYTES ? bytes.toString('base64') : undefined;
}

/**
 * The events of one received message: one for its bounce addresses, one per feedback address,
 * one per account whose routes take some of its recipients (carrying the bytes when `inline`
 * has them, otherwise naming the spool), and `message.reception` for each routed recipient
 * (inbound mail fires it too, issue 17).
 */
export function inboundPublications(
  envelope: InboundEnvelope,
  recipients: readonly AcceptedRecipient[],
  headline: ReceptionHeadline,
  inline?: string,
): InboundPublication[] {
  const timestamp = envelope.received_at;
  const id = envelope.inbound_id;
  const publications: InboundPublication[] = [];
  const bounces = recipients.flatMap((recipient) =>
    recipient.kind === 'bounce'
      ? [{ address: recipient.address, message_uuid: recipient.messageUuid }]
      : [],
  );
  if (bounces.length > 0) {
    const event: BounceMailEvent = {
      id: inboundEventId(id, 'bounce'),
      type: 'inbound.bounce',
      timestamp,
      data: { ...envelope, recipients: bounces },
    };
    publications.push(publicationOf(InboundStreamSubjects.bounce, event, 'read_at_once'));
  }
  for (const recipient of recipients) {
    if (recipient.kind !== 'feedback') continue;
    const event: FeedbackMailEvent = {
      id: inboundEventId(id, `feedback/${recipient.address}`),
      type: 'inbound.feedback',
      timestamp,
      data: { ...envelope, recipient: recipient.address },
    };
    publications.push(publicationOf(InboundStreamSubjects.feedback, event, 'read_at_once'));
  }
  const routedByAccount = new Map<string, Array<{ address: string; route_ids: string[] }>>();
  for (const recipient of recipients) {
    if (recipient.kind !== 'routed') continue;
    const list = routedByAccount.get(recipient.accountId) ?? [];
    list.push({ address: recipient.address, route_ids: recipient.routeIds });
    routedByAccount.set(recipient.accountId, list);
  }
  const accountInboundIds = inboundIdsByAccount(id, [...routedByAccount.keys()]);
  const { spool, ...withoutSpool } = envelope;
  const bytes = inline === undefined ? { spool } : { raw: inline };
  for (const [accountId, routed] of routedByAccount) {
    const event: RoutedMailEvent = {
      id: inboundEventId(id, `routed/${accountId}`),
      type: 'inbound.routed',
      timestamp,
      data: {
        ...withoutSpool,
        ...bytes,
        inbound_id: accountInboundIds.get(accountId) ?? id,
        account_id: accountId,
        recipients: routed,
      },
    };
    const spoolUse = inline === undefined ? 'awaited' : 'none';
    publications.push(publicationOf(InboundStreamSubjects.routed, event, spoolUse));
  }
  for (const recipient of recipients) {
    if (recipient.kind !== 'routed') continue;
    const event: InboundReceptionEvent = {
      id: inboundEventId(id, `reception/${recipient.address}`),
      type: 'message.reception',
      timestamp,
      data: {
        account_id: recipient.accountId,
        event: 'on_reception',
        from: headline.from,
        recipient: recipient.address,
        subject: headline.subject,
        message_id_header: headline.messageIdHeader,
        id: accountInboundIds.get(recipient.accountId) ?? id,
        is_bot: false,
        direction: 'inbound',
      },
    };
    publications.push(publicationOf(InboundStreamSubjects.reception, event, 'none'));
  }
  return publications;
}
