import { type KeyObject, sign } from 'node:crypto';
import { domainToASCII } from 'node:url';
import { promisify } from 'node:util';

import MessageParser from 'nodemailer/lib/dkim/message-parser';
import nodemailerSign from 'nodemailer/lib/dkim/sign';
import { foldLines } from 'nodemailer/lib/mime-funcs';

import { relaxedBodyHash } from './relaxed-body-hash';

const HASH_ALGO = 'sha256';
const HASH_NAME = 'RSA-SHA256';
const LF = 0x0a;
const CR = 0x0d;

export interface DkimSigner {
  domainName: string;
  keySelector: string;
  privateKey: KeyObject;
  /** Colon-separated header field names to sign (those present). */
  headerFieldNames: string;
}

/** The signed header fields, relaxed (RFC 6376 3.4.2), and the names of those present. */
interface RelaxedHeaders {
  headers: string;
  fieldNames: string;
}

/** nodemailer's own header canonicalization (its typings do not describe it). */
const relaxedHeaders = (
  nodemailerSign as unknown as {
    relaxedHeaders(this: void, headers: MessageParser.Header[], fieldNames: string): RelaxedHeaders;
  }
).relaxedHeaders;

/** RSA signatures on libuv's thread pool: the event loop goes on with the SMTP sessions. */
const signOffLoop = promisify(sign);

/**
 * The message with its DKIM-Signature field first: the same bytes nodemailer's streaming DKIM
 * signer gives (its header parser, header canonicalization and relaxed body hash, and its
 * signature field written the same way, called on the message in memory), without its streams,
 * their buffering and their event-loop hops. The RSA signature itself runs off the event loop.
 */
export async function dkimSigned(raw: Buffer, signer: DkimSigner): Promise<Buffer> {
  const split = headerEnd(raw);
  const parser = new MessageParser();
  parser.rawHeaders = raw.subarray(0, split);
  const relaxed = relaxedHeaders(parser.parseHeaders(), signer.headerFieldNames);
  const field = dkimFieldStart(
    signer,
    relaxed.fieldNames,
    await relaxedBodyHash(raw.subarray(split)),
  );
  const signedData = `${relaxed.headers}dkim-signature:${relaxedHeaderValue(field)}`;
  let signature: Buffer;
  try {
    signature = await signOffLoop(HASH_NAME, Buffer.from(signedData, 'latin1'), signer.privateKey);
  } catch {
    // As nodemailer does: a key that cannot sign leaves the message unsigned.
    return raw;
  }
  const folded = signature.toString('base64').replace(/(^.{73}|.{75}(?!\r?\n|\r))/g, '$&\r\n ');
  return Buffer.concat([Buffer.from(`${field}${folded.trim()}\r\n`), raw]);
}

/** The DKIM-Signature field up to its (empty) b= tag, folded as nodemailer writes it. */
function dkimFieldStart(signer: DkimSigner, fieldNames: string, bodyHash: string): string {
  const { beforeBodyHash, afterBodyHash } = signerTags(signer, fieldNames);
  return `${foldLines(`DKIM-Signature: ${beforeBodyHash}; bh=${bodyHash}; ${afterBodyHash}`, 76)};\r\n b=`;
}

interface SignerTags {
  beforeBodyHash: string;
  afterBodyHash: string;
}

/** The tags around bh= by signer and signed field names, as last made (a send's repeat). */
const signerTagsKept = new Map<string, SignerTags>();
const SIGNER_TAGS_KEPT_MAX = 1_000;

/** The field's tags but bh= (the same for every message of a signer with these header fields). */
function signerTags(signer: DkimSigner, fieldNames: string): SignerTags {
  const key = `${signer.domainName}\n${signer.keySelector}\n${fieldNames}`;
  let tags = signerTagsKept.get(key);
  if (!tags) {
    tags = {
      beforeBodyHash: [
        'v=1',
        `a=rsa-${HASH_ALGO}`,
        'c=relaxed/relaxed',
        `d=${asciiDomain(tagValue(signer.domainName))}`,
        'q=dns/txt',
        `s=${tagValue(signer.keySelector)}`,
      ].join('; '),
      afterBodyHash: `h=${tagValue(fieldNames)}`,
    };
    if (signerTagsKept.size >= SIGNER_TAGS_KEPT_MAX) signerTagsKept.clear();
    signerTagsKept.set(key, tags);
  }
  return tags;
}

/** A tag value without the characters that would end it or open another tag (controls, ; =). */
function tagValue(value: string): string {
  return [...value]
    .filter((char) => {
      const code = char.charCodeAt(0);
      return code > 0x1f && code !== 0x7f && char !== ';' && char !== '=';
    })
    .join('');
}

function asciiDomain(domain: string): string {
  return domainToASCII(domain) || domain.toLowerCase();
}

/** A header field's value, relaxed (RFC 6376 3.4.2): unfolded, runs of SP and HTAB as one SP. */
function relaxedHeaderValue(field: string): string {
  return field
    .slice(field.indexOf(':') + 1)
    .replace(/\r?\n/g, '')
    .replace(/[ \t]+/g, ' ')
    .replace(/^ | $/g, '');
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
