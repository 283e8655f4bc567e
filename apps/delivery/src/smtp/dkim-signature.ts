import type { KeyObject } from 'node:crypto';

import MessageParser from 'nodemailer/lib/dkim/message-parser';
import RelaxedBody from 'nodemailer/lib/dkim/relaxed-body';
import sign from 'nodemailer/lib/dkim/sign';

const HASH_ALGO = 'sha256';
const LF = 0x0a;
const CR = 0x0d;

export interface DkimSigner {
  domainName: string;
  keySelector: string;
  privateKey: KeyObject;
  /** Colon-separated header field names to sign (those present). */
  headerFieldNames: string;
}

/**
 * The message with its DKIM-Signature field first: the same bytes nodemailer's streaming DKIM
 * signer gives (its header parser, relaxed body hash and signature writer, called on the message
 * in memory), without its streams, their buffering and their event-loop hops.
 */
export async function dkimSigned(raw: Buffer, signer: DkimSigner): Promise<Buffer> {
  const split = headerEnd(raw);
  const parser = new MessageParser();
  parser.rawHeaders = raw.subarray(0, split);
  const field = sign(parser.parseHeaders(), HASH_ALGO, await relaxedBodyHash(raw.subarray(split)), {
    domainName: signer.domainName,
    keySelector: signer.keySelector,
    privateKey: signer.privateKey,
    headerFieldNames: signer.headerFieldNames,
  });
  if (!field) return raw;
  return Buffer.concat([Buffer.from(`${field}\r\n`), raw]);
}

/** The relaxed body hash (RFC 6376 3.4.4), base64, as nodemailer computes it. */
function relaxedBodyHash(body: Buffer): Promise<string> {
  const hasher = new RelaxedBody({ hashAlgo: HASH_ALGO });
  return new Promise((resolve, reject) => {
    hasher.once('hash', (hash: string) => resolve(hash));
    hasher.once('error', reject);
    // The body passes through the hasher: drop it, only the hash is wanted.
    hasher.resume();
    hasher.end(body);
  });
}

/**
 * Where the body starts: after the first empty line (LF LF or LF CR LF), as nodemailer's parser
 * finds it; the whole message when there is none (headers only).
 */
function headerEnd(raw: Buffer): number {
  for (let index = raw.indexOf(LF, 1); index >= 0; index = raw.indexOf(LF, index + 1)) {
    if (raw[index - 1] === LF) return index + 1;
    if (index > 1 && raw[index - 1] === CR && raw[index - 2] === LF) return index + 1;
  }
  return raw.length;
}
