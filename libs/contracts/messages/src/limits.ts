/** The numbers of spec 2.1 and 8 and of the reference contract, shared by gateway and service. */
export const RECIPIENTS_MIN = 1;
export const RECIPIENTS_MAX = 100;
/** Conversation messages: to, cc and bcc each 1–50, together at most 50. */
export const CONVERSATION_ADDRESSES_MAX = 50;
export const RETENTION_METADATA_DAYS = { min: 1, max: 30 } as const;
export const RETENTION_DATA_DAYS = { min: 0, max: 30 } as const;
/** schedule.first_attempt within 7 days of the request, schedule.expires within 8. */
export const FIRST_ATTEMPT_MAX_DAYS = 7;
export const EXPIRES_MAX_DAYS = 8;
export const TAGS_MAX = 20;
export const TAG_MAX_LENGTH = 255;
export const EMAIL_MAX_LENGTH = 254;
export const DISPLAY_NAME_MAX_LENGTH = 255;
export const SUBJECT_MAX_LENGTH = 998;
export const HEADERS_MAX = 100;
/** `Idempotency-Key` (spec 8). */
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
export const ATTACHMENTS_MAX = 100;
/** One message as composed (MIME, encoded), as the reference's SMTP relay limits it (20 MB). */
export const MESSAGE_MAX_BYTES = 20 * 1024 * 1024;
/**
 * Every message one send request composes, together: each recipient's message is stored on its
 * own, so a large attachment to 100 recipients is stored 100 times.
 */
export const SEND_MAX_BYTES = 100 * 1024 * 1024;
/** Above this many bytes a request body travels through the upload bucket, not the RPC payload. */
export const INLINE_PAYLOAD_MAX_BYTES = 512 * 1024;
/** The most messages one first-attempt delivery job (and one batch delivery view) covers. */
export const DELIVERY_JOB_MAX_MESSAGES = 100;
/** The most `message.reception` events one `message.reception_batch` stream message carries. */
export const RECEPTION_BATCH_MAX_EVENTS = 100;
