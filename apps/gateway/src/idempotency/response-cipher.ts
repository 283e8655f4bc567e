import { AesGcmCipher } from '@envoi/shared-secrets';

/**
 * AES-256-GCM for stored responses that carry a secret (the shared envelope iv ‖ tag ‖ ciphertext);
 * `context` (account and key) is authenticated, so a record cannot be replayed under another key.
 */
export class ResponseCipher extends AesGcmCipher {}
