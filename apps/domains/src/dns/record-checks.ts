import { createPublicKey, type KeyObject } from 'node:crypto';

/** Removes quote characters that a DNS panel may have stored literally, and outer blanks. */
function unquote(text: string): string {
  return text.replace(/"/g, '').trim();
}

/** Whether a TXT record is an SPF record (`v=spf1`, alone or followed by terms). */
export function isSpfRecord(txt: string): boolean {
  return /^v=spf1(\s|$)/i.test(unquote(txt));
}

export interface SpfTerms {
  /** Domains of `include:` mechanisms (any qualifier), lowercased without trailing dot. */
  includes: string[];
  /** The `redirect=` modifier's domain. */
  redirect: string | null;
}

/** The include and redirect targets of an SPF record; macros (`%{…}`) are skipped. */
export function spfTerms(record: string): SpfTerms {
  const includes: string[] = [];
  let redirect: string | null = null;
  for (const term of unquote(record).split(/\s+/).slice(1)) {
    const include = /^[+?~-]?include:(.+)$/i.exec(term);
    const target = include?.[1] ?? /^redirect=(.+)$/i.exec(term)?.[1];
    if (target === undefined || target.includes('%')) continue;
    const host = target.toLowerCase().replace(/\.$/, '');
    if (include) includes.push(host);
    else redirect = host;
  }
  return { includes, redirect };
}

/** The tags of a DKIM key record (`v=DKIM1; k=rsa; p=…`); tag names are case-sensitive. */
export function dkimTags(txt: string): Map<string, string> {
  const tags = new Map<string, string>();
  for (const part of unquote(txt).split(';')) {
    const cut = part.indexOf('=');
    if (cut < 0) continue;
    const name = part.slice(0, cut).trim();
    if (name !== '' && !tags.has(name)) tags.set(name, part.slice(cut + 1));
  }
  return tags;
}

/** The public key of a base64 SubjectPublicKeyInfo or PKCS#1 RSAPublicKey; null if neither. */
function parsePublicKey(base64: string): KeyObject | null {
  const der = Buffer.from(base64, 'base64');
  if (der.length === 0) return null;
  for (const type of ['spki', 'pkcs1'] as const) {
    try {
      return createPublicKey({ key: der, format: 'der', type });
    } catch {
      // try the next encoding
    }
  }
  return null;
}

function rsaComponents(key: KeyObject): string | null {
  if (key.asymmetricKeyType !== 'rsa') return null;
  const jwk = key.export({ format: 'jwk' });
  return `${jwk.n ?? ''}.${jwk.e ?? ''}`;
}

/**
 * Whether a published DKIM record carries the expected key, compared by key material: quotes and
 * whitespace inside the value are ignored, and the key may be SPKI or PKCS#1. An empty `p=`
 * (a revoked key) or a key type other than RSA never matches.
 */
export function dkimRecordMatches(txt: string, expectedPublicKey: string): boolean {
  const tags = dkimTags(txt);
  const version = tags.get('v')?.replace(/\s+/g, '');
  if (version !== undefined && version !== 'DKIM1') return false;
  const keyType = tags.get('k')?.replace(/\s+/g, '').toLowerCase();
  if (keyType !== undefined && keyType !== 'rsa') return false;
  const published = tags.get('p')?.replace(/\s+/g, '');
  if (!published || !/^[A-Za-z0-9+/]+=*$/.test(published)) return false;
  const actual = parsePublicKey(published);
  const expected = parsePublicKey(expectedPublicKey);
  if (!actual || !expected) return false;
  const components = rsaComponents(actual);
  return components !== null && components === rsaComponents(expected);
}

/** Whether a TXT record is a DMARC record. */
export function isDmarcRecord(txt: string): boolean {
  return /^v\s*=\s*DMARC1\s*(;|$)/i.test(unquote(txt));
}
