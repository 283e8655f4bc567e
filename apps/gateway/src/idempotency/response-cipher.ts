import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * AES-256-GCM for stored responses that carry a secret. The envelope is iv ‖ tag ‖ ciphertext;
 * `context` (account and key) is authenticated, so a record cannot be replayed under another key.
 */
export class ResponseCipher {
  private readonly key: Buffer;

  constructor(hexKey: string) {
    this.key = Buffer.from(hexKey, 'hex');
    if (this.key.length !== 32) throw new Error('the response cipher needs a 32-byte key');
  }

  seal(plaintext: Buffer, context: string): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]);
  }

  /** Throws when the envelope was altered or sealed under another key or context. */
  open(envelope: Buffer, context: string): Buffer {
    if (envelope.length < IV_BYTES + TAG_BYTES) throw new Error('truncated response envelope');
    const iv = envelope.subarray(0, IV_BYTES);
    const tag = envelope.subarray(IV_BYTES, IV_BYTES + TAG_BYTES);
    // A fixed tag length: GCM would otherwise accept a tag cut down to as little as 4 bytes.
    const decipher = createDecipheriv(ALGORITHM, this.key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(tag);
    return Buffer.concat([
      decipher.update(envelope.subarray(IV_BYTES + TAG_BYTES)),
      decipher.final(),
    ]);
  }
}
