import { createHash } from 'node:crypto';

import { normalizeDomainName } from '@envoi/contracts-core';
import { decodeEncodedWords } from '@envoi/shared-composition';
import addressparser from 'nodemailer/lib/addressparser';

import { fieldsNamed, type HeaderBlock, type HeaderField } from './header-block';

/** What a submission's header block says that accept needs. */
export interface SubmittedHeaders {
  /** The From header's (first) address. */
  from: string;
  /** Its domain, normalised. */
  fromDomain: string;
  /** Decoded; empty when there is none. */
  subject: string;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A field's value unfolded (each line break and the whitespace after it one space, as mailparser
 * reads it), read as UTF-8 when its bytes are (8-bit headers), else byte for byte.
 */
function unfoldedValue(raw: Buffer, field: HeaderField): string {
  const bytes = raw.subarray(field.start, field.end);
  const value = bytes.subarray(bytes.indexOf(0x3a) + 1);
  let text: string;
  try {
    text = UTF8.decode(value);
  } catch {
    text = value.toString('latin1');
  }
  return text.replace(/\r?\n[ \t]+/g, ' ').trim();
}

/**
 * From (its first address) and Subject (encoded words decoded), read from the header block the
 * caller parsed: undefined without a From address.
 */
export function parseSubmittedHeaders(
  raw: Buffer,
  block: HeaderBlock,
): SubmittedHeaders | undefined {
  const fromField = fieldsNamed(block, 'from')[0];
  if (!fromField) return undefined;
  const address = addressparser(unfoldedValue(raw, fromField), { flatten: true }).find(
    (entry) => entry.address,
  )?.address;
  if (!address) return undefined;
  const at = address.lastIndexOf('@');
  if (at <= 0 || at === address.length - 1) return undefined;
  const subjectField = fieldsNamed(block, 'subject')[0];
  return {
    from: address,
    fromDomain: normalizeDomainName(address.slice(at + 1)),
    subject: subjectField ? decodeEncodedWords(unfoldedValue(raw, subjectField)) : '',
  };
}

/**
 * The Message-ID the platform sets on a submission, the same for every retry of it (so that a
 * repeated request answers what the first one committed): a UUID-shaped digest of the account
 * and the submission id, on the sender's domain.
 */
export function submissionMessageId(
  accountId: string,
  submissionId: string,
  domain: string,
): string {
  const hex = createHash('sha256').update(`${accountId}\n${submissionId}`).digest('hex');
  // Version 8 (custom) and the RFC 9562 variant.
  const variant = ((Number.parseInt(hex.charAt(16), 16) & 0x3) | 0x8).toString(16);
  const uuid = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
  return `<${uuid}@${domain}>`;
}
