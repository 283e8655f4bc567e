import { randomBytes } from 'node:crypto';

/** The platform's own prefix of webhook signing secrets (the reference service uses `aha-whsec-`). */
export const WEBHOOK_SECRET_PREFIX = 'envoi-whsec-';
export const WEBHOOK_SECRET_RANDOM_BYTES = 32;

/** A new signing secret: the prefix and 32 random bytes in base64url (signed as UTF-8, whole). */
export function generateWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(WEBHOOK_SECRET_RANDOM_BYTES).toString('base64url');
}
