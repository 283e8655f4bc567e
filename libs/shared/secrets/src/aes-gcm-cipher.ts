import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const ALGORITHM = 'aes-256-gcm';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class SecretDecryptionError extends Error {}

/**
 * AES-256-GCM for secrets kept at rest. The envelope is iv ‖ tag ‖ ciphertext; `context` (the
 * owning row, say) is authenticated, so an envelope copied elsewhere does not open.
 */
export class AesGcmCipher {
  private readonly key: Buffer;

  /** `hexKey`: 64 hexadecimal characters (32 bytes). */
  constructor(hexKey: string) {
    if (!/^[0-9a-fA-F]{64}$/.test(hexKey)) {
      throw new Error(
        `an AES-256-GCM key needs ${KEY_BYTES * 2} hex digits (a ${KEY_BYTES}-byte key)`,
      );
    }
    this.key = Buffer.from(hexKey, 'hex');
  }

  seal(plaintext: Buffer, context: string): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]);
  }

  /** Throws SecretDecryptionError when the envelope was altered or sealed under another key or context. */
  open(envelope: Buffer, context: string): Buffer {
    if (envelope.length < IV_BYTES + TAG_BYTES) {
      throw new SecretDecryptionError('truncated secret envelope');
    }
    const iv = envelope.subarray(0, IV_BYTES);
    const tag = envelope.subarray(IV_BYTES, IV_BYTES + TAG_BYTES);
    // A fixed tag length: GCM would otherwise accept a tag cut down to as little as 4 bytes.
    const decipher = createDecipheriv(ALGORITHM, this.key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([
        decipher.update(envelope.subarray(IV_BYTES + TAG_BYTES)),
        decipher.final(),
      ]);
    } catch {
      throw new SecretDecryptionError('the secret envelope does not authenticate');
    }
  }

  /** A UTF-8 string sealed as base64 text (for a text column). */
  sealText(plaintext: string, context: string): string {
    return this.seal(Buffer.from(plaintext, 'utf8'), context).toString('base64');
  }

  openText(sealed: string, context: string): string {
    return this.open(Buffer.from(sealed, 'base64'), context).toString('utf8');
  }
}
