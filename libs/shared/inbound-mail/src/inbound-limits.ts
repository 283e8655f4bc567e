/**
 * Bounds of one inbound parse (reliability plan items 43-44). A message over any bound is
 * rejected whole with an {@link InboundMessageRejected}, never truncated: the MX parses before
 * its `250`, so a rejection becomes the SMTP reply and nothing half-read is ever routed.
 */
export interface InboundLimits {
  /** Raw message size (what the MX accepted in DATA). */
  maxMessageBytes: number;
  /** MIME entities, the top-level one included. */
  maxParts: number;
  /** Nesting of multiparts and attached messages; the top-level entity is depth 0. */
  maxDepth: number;
  /** Header fields of any one header block (the message's or a part's). */
  maxHeaders: number;
  /** Decoded bytes of every body and attachment together. */
  maxDecodedBytes: number;
  /** Decoded bytes of the attachments together. */
  maxAttachmentBytes: number;
  /** Wall-clock budget of the whole parse. */
  parseTimeoutMs: number;
}

export const DEFAULT_INBOUND_LIMITS: InboundLimits = {
  maxMessageBytes: 30 * 1024 * 1024,
  maxParts: 1000,
  maxDepth: 30,
  maxHeaders: 1000,
  maxDecodedBytes: 40 * 1024 * 1024,
  maxAttachmentBytes: 30 * 1024 * 1024,
  parseTimeoutMs: 10_000,
};

export type InboundRejectionReason =
  | 'message_too_large'
  | 'decoded_too_large'
  | 'attachments_too_large'
  | 'too_many_parts'
  | 'too_deep'
  | 'too_many_headers'
  | 'parse_timeout'
  | 'malformed';

/** The SMTP reply an MX gives for a rejected message (RFC 3463 enhanced codes). */
export interface InboundSmtpReply {
  code: 552 | 554;
  enhancedCode: '5.3.4' | '5.6.0';
  text: string;
}

const SIZE_REASONS: ReadonlySet<InboundRejectionReason> = new Set([
  'message_too_large',
  'decoded_too_large',
  'attachments_too_large',
]);

/** A message the platform refuses to route; {@link smtpReply} says how to refuse it. */
export class InboundMessageRejected extends Error {
  constructor(
    readonly reason: InboundRejectionReason,
    message: string,
  ) {
    super(message);
    this.name = 'InboundMessageRejected';
  }

  /** `552 5.3.4` for a size bound, `554 5.6.0` for a structure the parser will not read. */
  get smtpReply(): InboundSmtpReply {
    if (SIZE_REASONS.has(this.reason)) {
      return { code: 552, enhancedCode: '5.3.4', text: `Message too big: ${this.message}` };
    }
    return {
      code: 554,
      enhancedCode: '5.6.0',
      text: `Malformed or unsupported content: ${this.message}`,
    };
  }
}
