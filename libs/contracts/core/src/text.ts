/**
 * Control characters other than tab. Matching them is the point (text from the network may carry
 * any; PostgreSQL text takes no NUL), hence the one exception to the lint rule.
 */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f]+/g;

/** One line of printable text: each run of control characters (line breaks too) becomes a space. */
export function printable(text: string): string {
  return text.replace(CONTROL, ' ');
}
