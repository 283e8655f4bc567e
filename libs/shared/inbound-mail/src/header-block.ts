import type { HeaderField } from './parsed-inbound-message';

const CRLF_CRLF = Buffer.from('\r\n\r\n');
const LF_LF = Buffer.from('\n\n');

/** Where the top-level header block ends: its blank line, or the end of a message without one. */
function headerBlockEnd(raw: Buffer): number {
  const ends = [raw.indexOf(CRLF_CRLF), raw.indexOf(LF_LF)].filter((index) => index !== -1);
  return ends.length === 0 ? raw.length : Math.min(...ends);
}

/**
 * The fields of the top-level header block, unfolded and trimmed, values as sent (no RFC 2047
 * decoding); only the header block is read, never the body.
 */
export function topHeaderFields(raw: Buffer): HeaderField[] {
  const fields: HeaderField[] = [];
  for (const line of raw.toString('utf8', 0, headerBlockEnd(raw)).split(/\r?\n/)) {
    const last = fields[fields.length - 1];
    if ((line.startsWith(' ') || line.startsWith('\t')) && last) {
      last.value = `${last.value} ${line.trim()}`.trim();
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    fields.push({ name: line.slice(0, colon).trim(), value: line.slice(colon + 1).trim() });
  }
  return fields;
}

const QUOTED_STRING = /"(?:[^"\\]|\\.)*"/g;
const COMMENT = /\((?:[^()\\]|\\.)*\)/g;

/**
 * The address of the first mailbox of an address header (`Name <a@b>`, `a@b`, a group's first
 * member), or `""` when it has none.
 */
export function firstMailboxAddress(value: string): string {
  const plain = value.replace(QUOTED_STRING, '""').replace(COMMENT, ' ');
  const angle = /<([^<>]*)>/.exec(plain);
  if (angle) {
    // An obsolete source route (`<@relay:a@b>`) leads the address.
    const address = (angle[1] ?? '').replace(/^@[^:]*:/, '').trim();
    if (address.includes('@')) return address;
  }
  for (const token of plain.split(/[,;:\s]+/)) {
    if (token.includes('@') && !token.includes('<')) return token;
  }
  return '';
}
