/** Bytes of a response body kept for the tenant to read. */
export const RESPONSE_PREFIX_BYTES = 1024;

/** Control, format, private-use and unassigned characters, except tab and line feed. */
const NON_PRINTABLE = /(?![\t\n])\p{C}/gu;

/**
 * The first bytes of a response body as printable text: UTF-8 decoded (a character cut at the end
 * is dropped), control and other non-printable characters removed.
 */
export function printablePrefix(bytes: Buffer): string {
  const text = bytes
    .subarray(0, RESPONSE_PREFIX_BYTES)
    .toString('utf8')
    .replace(/\uFFFD$/, '');
  return text.replace(NON_PRINTABLE, '');
}
