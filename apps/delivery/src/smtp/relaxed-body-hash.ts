import { createHash } from 'node:crypto';

import RelaxedBody from 'nodemailer/lib/dkim/relaxed-body';

const HASH_ALGO = 'sha256';
const CR = 0x0d;
const LF = 0x0a;
const SPACE = 0x20;
const TAB = 0x09;
const CRLF = Buffer.from('\r\n');
const DOUBLE_SPACE = Buffer.from('  ');
const SPACE_CRLF = Buffer.from(' \r\n');

/**
 * The relaxed body hash (RFC 6376 3.4.4), base64, as nodemailer's RelaxedBody computes it. A body
 * its relaxed canonicalization leaves as it is (what Envoi composes: CRLF line ends, no tab, no
 * run of spaces, no space at a line's end) is hashed directly, up to its last non-empty line;
 * any other goes through nodemailer's canonicalization.
 */
export function relaxedBodyHash(body: Buffer): Promise<string> {
  if (!isRelaxedAlready(body)) return canonicalizedHash(body);
  let end = body.length;
  while (end >= 2 && body[end - 2] === CR && body[end - 1] === LF) end -= 2;
  const hash = createHash(HASH_ALGO);
  // Empty lines at the end are not part of the body; a body with content ends with one CRLF.
  if (end > 0) hash.update(body.subarray(0, end)).update(CRLF);
  return Promise.resolve(hash.digest('base64'));
}

/**
 * Whether relaxed canonicalization changes nothing but the empty lines at the end: every CR and
 * LF is part of a CRLF, and no whitespace is changed (no tab, no two spaces in a row, no space
 * at the end of a line or of the body).
 */
export function isRelaxedAlready(body: Buffer): boolean {
  if (body.includes(TAB) || body.includes(DOUBLE_SPACE) || body.includes(SPACE_CRLF)) {
    return false;
  }
  if (body.length > 0 && body[body.length - 1] === SPACE) return false;
  for (let index = body.indexOf(LF); index !== -1; index = body.indexOf(LF, index + 1)) {
    if (body[index - 1] !== CR) return false;
  }
  for (let index = body.indexOf(CR); index !== -1; index = body.indexOf(CR, index + 1)) {
    if (body[index + 1] !== LF) return false;
  }
  return true;
}

/** nodemailer's relaxed body hash of any body. */
function canonicalizedHash(body: Buffer): Promise<string> {
  const hasher = new RelaxedBody({ hashAlgo: HASH_ALGO });
  return new Promise((resolve, reject) => {
    hasher.once('hash', (hash: string) => resolve(hash));
    hasher.once('error', reject);
    // The body passes through the hasher: drop it, only the hash is wanted.
    hasher.resume();
    hasher.end(body);
  });
}
