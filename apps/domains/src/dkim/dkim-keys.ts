import { createPrivateKey, createPublicKey, generateKeyPair, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';

const generateKeyPairAsync = promisify(generateKeyPair);

export const DKIM_KEY_BITS = 2048;
export const IMPORTED_KEY_MIN_BITS = 1024;
export const IMPORTED_KEY_MAX_BITS = 4096;

export interface DkimKeyPair {
  /** PKCS#8 PEM: what is encrypted at rest and handed to signers. */
  privateKeyPem: string;
  /** Base64 of the SubjectPublicKeyInfo DER: the `p=` of the DKIM record. */
  publicKey: string;
}

function publicKeyOf(key: KeyObject): string {
  return createPublicKey(key).export({ type: 'spki', format: 'der' }).toString('base64');
}

/** A fresh RSA key pair, generated off the event loop. */
export async function generateDkimKeyPair(bits = DKIM_KEY_BITS): Promise<DkimKeyPair> {
  const { privateKey } = await generateKeyPairAsync('rsa', { modulusLength: bits });
  return {
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKey: publicKeyOf(privateKey),
  };
}

export class InvalidDkimKeyError extends Error {}

/** A customer's own key (PEM, PKCS#1 or PKCS#8): RSA of 1024–4096 bits, else InvalidDkimKeyError. */
export function importDkimPrivateKey(pem: string): DkimKeyPair {
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem.trim(), format: 'pem' });
  } catch {
    throw new InvalidDkimKeyError('dkim_private_key is not a PEM private key');
  }
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (key.asymmetricKeyType !== 'rsa') {
    throw new InvalidDkimKeyError('dkim_private_key must be an RSA key');
  }
  if (bits < IMPORTED_KEY_MIN_BITS || bits > IMPORTED_KEY_MAX_BITS) {
    throw new InvalidDkimKeyError(
      `dkim_private_key must have ${IMPORTED_KEY_MIN_BITS} to ${IMPORTED_KEY_MAX_BITS} bits`,
    );
  }
  return {
    privateKeyPem: key.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKey: publicKeyOf(key),
  };
}
