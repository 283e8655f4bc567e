import { createHash } from 'node:crypto';

import { normalizeDomainName } from '@envoi/contracts-core';
import { simpleParser } from 'mailparser';

import type { HeaderBlock } from './header-block';

/** What a submission's header block says that accept needs. */
export interface SubmittedHeaders {
  /** The From header's (first) address. */
  from: string;
  /** Its domain, normalised. */
  fromDomain: string;
  /** Decoded; empty when there is none. */
  subject: string;
}

/** The header block alone, parsed: From (else Sender) and Subject; undefined without an address. */
export async function parseSubmittedHeaders(
  raw: Buffer,
  block: HeaderBlock,
): Promise<SubmittedHeaders | undefined> {
  const headersOnly = Buffer.concat([raw.subarray(0, block.end), Buffer.from(block.eol)]);
  const parsed = await simpleParser(headersOnly, { skipHtmlToText: true, skipTextToHtml: true });
  const address = parsed.from?.value.find((entry) => entry.address)?.address;
  if (!address) return undefined;
  const at = address.lastIndexOf('@');
  if (at <= 0 || at === address.length - 1) return undefined;
  return {
    from: address,
    fromDomain: normalizeDomainName(address.slice(at + 1)),
    subject: parsed.subject ?? '',
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
