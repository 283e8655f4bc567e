import type { StreamEvent } from '@envoi/contracts-core';
import type { MessageReceptionData } from '@envoi/contracts-messages';

/**
 * Mail received by the MX is spooled, whole and as received, in this JetStream object store
 * bucket before the MX answers 250; the events below name it. Consumers copy what they must keep:
 * spooled objects expire (the smtp app's SMTP_MX_SPOOL_TTL_MS).
 */
export const INBOUND_SPOOL_BUCKET = 'inbound-spool';

/**
 * A routed message of at most this many bytes travels in its event (`raw`) rather than in the
 * spool: one JetStream message to store and read instead of three.
 */
export const INBOUND_INLINE_MAX_BYTES = 64 * 1024;

export interface InboundSpoolRef {
  bucket: string;
  name: string;
  /** Bytes. */
  size: number;
  /** SHA-256 of the bytes, lowercase hex. */
  sha256: string;
}

/** What the MX knows of one received message, whatever it is for. */
export interface InboundEnvelope {
  /** The MX's id of the received message (uuid); one per DATA. */
  inbound_id: string;
  received_at: string;
  remote_address: string;
  helo: string;
  tls: boolean;
  /** MAIL FROM; `""` for the null sender (`<>`). */
  envelope_from: string;
  size: number;
  spool: InboundSpoolRef;
}

/** RCPT outcome for a routed domain: which account's routes take the address. */
export type RecipientMatch =
  | { outcome: 'route'; account_id: string; domain: string; route_ids: string[] }
  /** The domain has routes, none matches the local part: `550 5.1.1`. */
  | { outcome: 'unknown_recipient' }
  /** No account routes this domain: `550 5.7.1` relaying denied. */
  | { outcome: 'not_routed' };

/**
 * Mail for an account's routes: its bytes in its spool (`spool`), or, for a message of at most
 * INBOUND_INLINE_MAX_BYTES, in the event itself (`raw`, base64; no spool is stored for it).
 */
export interface RoutedMailData extends Omit<InboundEnvelope, 'spool'> {
  spool?: InboundSpoolRef;
  raw?: string;
  account_id: string;
  recipients: Array<{ address: string; route_ids: string[] }>;
}

/** Mail to a VERP bounce address (`bounce+<message uuid>@<bounce host>`). */
export interface BounceMailData extends InboundEnvelope {
  recipients: Array<{ address: string; message_uuid: string }>;
}

/** Mail to the platform's feedback (ARF complaints) address. */
export interface FeedbackMailData extends InboundEnvelope {
  recipient: string;
}

/**
 * `data` of `message.reception` for mail the MX took for a route (issue 17: inbound mail fires
 * it too), one per routed recipient: `from` is the From header's address (the envelope sender
 * when it has none), `message_id_header` the Message-ID as received ('' when none), `id` the
 * inbound id of the MX's 250. `direction` is read by the webhooks fan-out (the recipient's
 * domain scopes the event) and left out of the payload.
 */
export interface InboundReceptionData extends MessageReceptionData {
  direction: 'inbound';
}

export type RoutedMailEvent = StreamEvent<'inbound.routed', RoutedMailData>;
export type InboundReceptionEvent = StreamEvent<'message.reception', InboundReceptionData>;
export type BounceMailEvent = StreamEvent<'inbound.bounce', BounceMailData>;
export type FeedbackMailEvent = StreamEvent<'inbound.feedback', FeedbackMailData>;
