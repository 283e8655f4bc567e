import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const FORMAT_VERSION = 1;
const KEY_ID_LENGTH = 4;
const IV_LENGTH = 12;
const TAG_LENGTH = 16;
const HEADER_LENGTH = 1 + KEY_ID_LENGTH + IV_LENGTH + TAG_LENGTH;

export class DkimKeyDecryptionError extends Error {}

/**
 * Encrypts DKIM private keys at rest with AES-256-GCM. A sealed key is
 * `version (1) | key id (4) | IV (12) | tag (16) | ciphertext`; the key id (the first bytes of the
 * key's SHA-256) tells a wrong key apart from corrupted data, and the domain id is bound as
 * associated data, so a sealed key copied to another domain's row does not open.
 */
export class DkimKeyCipher {
  private readonly key: Buffer;
  private readonly keyId: Buffer;

  constructor(hexKey: string) {
    if (!/^[0-9a-fA-F]{64}$/.test(hexKey))
      throw new Error('the DKIM encryption key needs 64 hex digits');
    this.key = Buffer.from(hexKey, 'hex');
    this.keyId = createHash('sha256').update(this.key).digest().subarray(0, KEY_ID_LENGTH);
  }

  seal(privateKeyPem: string, domainId: string): Buffer {
    const iv = randomBytes(IV_LENGTH);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_LENGTH });
    cipher.setAAD(associatedData(domainId));
    const ciphertext = Buffer.concat([cipher.update(privateKeyPem, 'utf8'), cipher.final()]);
    return Buffer.concat([
      Buffer.from([FORMAT_VERSION]),
      this.keyId,
      iv,
      cipher.getAuthTag(),
      ciphertext,
    ]);
  }

  open(sealed: Buffer, domainId: string): string {
    if (sealed.length <= HEADER_LENGTH || sealed[0] !== FORMAT_VERSION) {
      throw new DkimKeyDecryptionError('not a sealed DKIM key');
    }
    const keyId = sealed.subarray(1, 1 + KEY_ID_LENGTH);
    if (!keyId.equals(this.keyId)) {
      throw new DkimKeyDecryptionError('the DKIM key was sealed with another DKIM_ENCRYPTION_KEY');
    }
    const iv = sealed.subarray(1 + KEY_ID_LENGTH, 1 + KEY_ID_LENGTH + IV_LENGTH);
    const tag = sealed.subarray(1 + KEY_ID_LENGTH + IV_LENGTH, HEADER_LENGTH);
    const decipher = createDecipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_LENGTH });
    decipher.setAAD(associatedData(domainId));
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([
        decipher.update(sealed.subarray(HEADER_LENGTH)),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      throw new DkimKeyDecryptionError('the sealed DKIM key does not authenticate');
    }
  }
}

function associatedData(domainId: string): Buffer {
  return Buffer.from(`envoi.dkim:${domainId}`, 'utf8');
}
