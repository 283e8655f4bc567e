/** Wire records of the routes API (reference contract `Route`, platform notes 2.8). */

export interface RouteOptions {
  /** Include `attachments` (with their bytes, base64) in the payload. */
  attachments: boolean;
  /** Include `headers` in the payload. */
  headers: boolean;
  /** One POST per email instead of one per recipient. */
  group_by_message_id: boolean;
  /** Add `reply_from_plain_body`: the plain body without the quoted reply. */
  strip_replies: boolean;
}

export interface RouteRecord extends RouteOptions {
  object: 'route';
  id: string;
  created_at: string;
  updated_at: string;
  name: string;
  url: string;
  /** The recipient pattern (`support`, `ticket-*`, `*@example.com`); `""` matches every address. */
  recipient: string;
  enabled: boolean;
  success_count: number;
  error_count: number;
  /** Consecutive failed calls, reset by the next success. */
  errors_since_last_success: number;
  last_request_at: string | null;
}

/** The 201 body of a creation: the only place the secret ever appears. */
export interface CreatedRouteRecord extends RouteRecord {
  secret: string;
}

/** One attachment (or inline cid part) of a routed message (notes 2.8). */
export interface RoutingAttachmentRecord {
  filename: string;
  content_type: string;
  /** Without `<>`, percent-decoded; `""` when none. */
  content_id: string;
  /** The lowercased Content-Disposition value, or `""`. */
  disposition: string;
  /** The bytes, base64. */
  data: string;
}

/** `data` of the `message.routing` payload (webhooks.yaml, notes 2.8). */
export interface MessageRoutingData {
  id: string;
  from: string;
  reply_to: string;
  to: string;
  subject: string;
  message_id: string;
  size: number;
  spam_score: number;
  bounce: boolean;
  /** Comma-separated. */
  cc: string;
  date: string;
  in_reply_to: string;
  references: string;
  auto_submitted: string;
  html_body: string;
  plain_body: string;
  reply_from_plain_body?: string;
  attachments?: RoutingAttachmentRecord[];
  headers?: Record<string, string>;
}

/** The body POSTed to a route URL. */
export interface MessageRoutingPayload {
  type: 'message.routing';
  route_id: string;
  /** RFC 3339 with nanoseconds, as webhook payloads. */
  timestamp: string;
  data: MessageRoutingData;
}
