/**
 * The header block of a raw RFC 5322 message, read without touching its bytes: each field's
 * name, unfolded value and byte range (its continuation lines and line ending included), so
 * that fields can be removed or added while every other byte stays as the client sent it.
 */

/** One header field of the block. */
export interface HeaderField {
  /** As written (case kept). */
  name: string;
  /** Unfolded (line breaks of folding removed) and trimmed; raw bytes read as latin1. */
  value: string;
  /** Byte offset of the field's first byte. */
  start: number;
  /** Byte offset just after the field's last line ending. */
  end: number;
}

export interface HeaderBlock {
  fields: HeaderField[];
  /** Byte offset just after the header block (the empty line excluded; the body starts after it). */
  end: number;
  /** The line ending the message uses (its first line's): new lines are written with it. */
  eol: '\r\n' | '\n';
}

/** A field name: printable US-ASCII except the colon (RFC 5322 3.6.8). */
const FIELD_NAME = /^[!-9;-~]+$/;

/** Where the line starting at `start` ends (after its LF), or the text's length. */
function lineEnd(text: string, start: number): number {
  const lf = text.indexOf('\n', start);
  return lf === -1 ? text.length : lf + 1;
}

/** The line without its line ending. */
function withoutEol(line: string): string {
  if (line.endsWith('\r\n')) return line.slice(0, -2);
  if (line.endsWith('\n')) return line.slice(0, -1);
  return line;
}

function isEmptyLine(line: string): boolean {
  return withoutEol(line) === '';
}

/**
 * The message's header block, or undefined when it has none that parses: the first line is not
 * a field, a line of the block is neither a field nor a continuation, or there are no fields.
 */
export function readHeaderBlock(raw: Buffer): HeaderBlock | undefined {
  // latin1 maps each byte to one character: string offsets are byte offsets.
  const text = raw.toString('latin1');
  const firstEnd = lineEnd(text, 0);
  const eol = text.slice(0, firstEnd).endsWith('\r\n') ? '\r\n' : '\n';
  const fields: HeaderField[] = [];
  let position = 0;
  while (position < text.length) {
    const end = lineEnd(text, position);
    const line = text.slice(position, end);
    if (isEmptyLine(line)) break;
    const first = line.charAt(0);
    if (first === ' ' || first === '\t') {
      const field = fields.at(-1);
      if (!field) return undefined;
      field.value = `${field.value} ${withoutEol(line).trim()}`.trim();
      field.end = end;
      position = end;
      continue;
    }
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon) : '';
    if (!FIELD_NAME.test(name)) return undefined;
    fields.push({ name, value: withoutEol(line.slice(colon + 1)).trim(), start: position, end });
    position = end;
  }
  if (fields.length === 0) return undefined;
  return { fields, end: position, eol };
}

/** The fields named `name` (case-insensitively), in order. */
export function fieldsNamed(block: HeaderBlock, name: string): HeaderField[] {
  const wanted = name.toLowerCase();
  return block.fields.filter((field) => field.name.toLowerCase() === wanted);
}

/** The raw message without the given fields (each with its continuation lines). */
export function withoutFields(raw: Buffer, removed: readonly HeaderField[]): Buffer {
  if (removed.length === 0) return raw;
  const ordered = [...removed].sort((a, b) => a.start - b.start);
  const kept: Buffer[] = [];
  let position = 0;
  for (const field of ordered) {
    kept.push(raw.subarray(position, field.start));
    position = field.end;
  }
  kept.push(raw.subarray(position));
  return Buffer.concat(kept);
}

/** The raw message with `lines` (`Name: value`, without line endings) added at its top. */
export function withFieldsOnTop(raw: Buffer, lines: readonly string[], eol: string): Buffer {
  if (lines.length === 0) return raw;
  return Buffer.concat([Buffer.from(lines.map((line) => `${line}${eol}`).join(''), 'utf8'), raw]);
}
