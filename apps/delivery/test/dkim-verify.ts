import { createHash, createPublicKey, verify } from 'node:crypto';

/**
 * A DKIM verifier for tests (RFC 6376, rsa-sha256, relaxed/relaxed only), written against the
 * RFC with node:crypto because no verifier library is installed: it checks the body hash and
 * the signature over the signed headers with the public key the domain publishes in DNS.
 */
export interface DkimCheck {
  ok: boolean;
  reason: string;
  domain: string;
  selector: string;
  signedHeaders: string[];
}

function splitMessage(raw: Buffer): { headerLines: string[]; body: string } {
  const text = raw.toString('latin1');
  const end = text.indexOf('\r\n\r\n');
  const head = end < 0 ? text : text.slice(0, end);
  const body = end < 0 ? '' : text.slice(end + 4);
  // Unfolded header fields, each with its original (folded) text.
  const headerLines: string[] = [];
  for (const line of head.split('\r\n')) {
    if (/^[ \t]/.test(line) && headerLines.length > 0) {
      headerLines[headerLines.length - 1] += `\r\n${line}`;
    } else headerLines.push(line);
  }
  return { headerLines, body };
}

function relaxedHeader(field: string): string {
  const colon = field.indexOf(':');
  const name = field.slice(0, colon).trim().toLowerCase();
  const value = field
    .slice(colon + 1)
    .replace(/\r\n/g, '')
    .replace(/[ \t]+/g, ' ')
    .trim();
  return `${name}:${value}`;
}

function relaxedBody(body: string): string {
  const lines = body.split('\r\n').map((line) => line.replace(/[ \t]+/g, ' ').replace(/ $/, ''));
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines.length === 0 ? '' : `${lines.join('\r\n')}\r\n`;
}

function tags(value: string): Map<string, string> {
  const result = new Map<string, string>();
  for (const part of value.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    result.set(part.slice(0, eq).trim(), part.slice(eq + 1).replace(/\s+/g, ''));
  }
  return result;
}

/** Verifies the message's first DKIM-Signature with the TXT record `lookup` returns. */
export function verifyDkim(raw: Buffer, lookupTxt: (name: string) => string | null): DkimCheck {
  const { headerLines, body } = splitMessage(raw);
  const signature = headerLines.find((line) => /^dkim-signature:/i.test(line));
  const fail = (reason: string, extra: Partial<DkimCheck> = {}): DkimCheck => ({
    ok: false,
    reason,
    domain: '',
    selector: '',
    signedHeaders: [],
    ...extra,
  });
  if (!signature) return fail('no DKIM-Signature');
  const sig = tags(signature.slice(signature.indexOf(':') + 1));
  const domain = sig.get('d') ?? '';
  const selector = sig.get('s') ?? '';
  const signedHeaders = (sig.get('h') ?? '').split(':').map((name) => name.toLowerCase());
  const found = { domain, selector, signedHeaders };
  if (sig.get('a') !== 'rsa-sha256') return fail(`algorithm ${sig.get('a')}`, found);
  if (sig.get('c') !== 'relaxed/relaxed') return fail(`canonicalization ${sig.get('c')}`, found);
  const bodyHash = createHash('sha256').update(relaxedBody(body), 'latin1').digest('base64');
  if (bodyHash !== sig.get('bh')) return fail('body hash mismatch', found);

  const record = lookupTxt(`${selector}._domainkey.${domain}`);
  if (!record) return fail('no key record', found);
  const publicKey = tags(record).get('p');
  if (!publicKey) return fail('no p= in the key record', found);

  // Each listed name takes the last unused instance of that field, from the bottom up.
  const used = new Set<number>();
  const canonical: string[] = [];
  for (const name of signedHeaders) {
    for (let index = headerLines.length - 1; index >= 0; index--) {
      const line = headerLines[index] ?? '';
      if (used.has(index) || line.slice(0, line.indexOf(':')).trim().toLowerCase() !== name) {
        continue;
      }
      used.add(index);
      canonical.push(`${relaxedHeader(line)}\r\n`);
      break;
    }
  }
  const unsigned = relaxedHeader(signature).replace(/(^|;)(\s*b=)[^;]*/, '$1$2');
  const data = canonical.join('') + unsigned;
  const key = createPublicKey({
    key: Buffer.from(publicKey, 'base64'),
    format: 'der',
    type: 'spki',
  });
  const ok = verify(
    'sha256',
    Buffer.from(data, 'latin1'),
    key,
    Buffer.from(sig.get('b') ?? '', 'base64'),
  );
  return { ok, reason: ok ? 'pass' : 'signature mismatch', ...found };
}
