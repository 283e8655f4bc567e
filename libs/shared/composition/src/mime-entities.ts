/**
 * Finds the text/html leaf parts of a raw MIME message without copying it: every position is an
 * offset into the message, so a caller can splice new bytes in and keep all others.
 */

/** A header field: its unfolded value and where the whole field (folds included) lies. */
export interface HeaderField {
  value: string;
  start: number;
  end: number;
}

/** An entity (the message or one of its parts): its first header fields by lower-case name. */
export interface MimeEntity {
  headers: Map<string, HeaderField>;
  /** Where the header block starts (the first field, or the blank line when there are none). */
  headerStart: number;
  bodyStart: number;
  bodyEnd: number;
}

/** A media type and its parameters (names in lower case, values unquoted). */
export interface ContentType {
  type: string;
  params: Map<string, string>;
}

const MAX_DEPTH = 32;
const LF = 0x0a;
const CR = 0x0d;

/** The message's line break: CRLF when its first line ends so, else LF. */
export function lineBreakOf(raw: Buffer): string {
  const lf = raw.indexOf(LF);
  return lf > 0 && raw[lf - 1] === CR ? '\r\n' : '\n';
}

/** Parses `type/subtype; name=value; name="quoted value"`. */
export function parseContentType(value: string): ContentType {
  const semicolon = value.indexOf(';');
  const type = (semicolon === -1 ? value : value.slice(0, semicolon)).trim().toLowerCase();
  const params = new Map<string, string>();
  if (semicolon === -1) return { type, params };
  const param = /;\s*([^\s=;]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;\s]*)/g;
  for (const match of value.slice(semicolon).matchAll(param)) {
    const name = match[1].toLowerCase();
    const raw = match[2];
    const unquoted = raw.startsWith('"') ? raw.slice(1, -1).replace(/\\(.)/g, '$1') : raw;
    if (!params.has(name)) params.set(name, unquoted);
  }
  return { type, params };
}

/** The entity in raw[start, end), or null when its header block has no end. */
export function parseEntity(
  raw: Buffer,
  start: number,
  end: number,
  eol: string,
): MimeEntity | null {
  const headers = new Map<string, HeaderField>();
  if (raw.toString('latin1', start, start + eol.length) === eol) {
    return { headers, headerStart: start, bodyStart: start + eol.length, bodyEnd: end };
  }
  const blank = raw.indexOf(eol + eol, start, 'latin1');
  if (blank === -1 || blank + eol.length > end) return null;
  // latin1: one character per byte, so string offsets are byte offsets.
  const block = raw.toString('latin1', start, blank + eol.length);
  let fieldStart = 0;
  while (fieldStart < block.length) {
    let fieldEnd = block.indexOf(eol, fieldStart);
    while (block[fieldEnd + eol.length] === ' ' || block[fieldEnd + eol.length] === '\t') {
      fieldEnd = block.indexOf(eol, fieldEnd + eol.length);
    }
    const field = block.slice(fieldStart, fieldEnd);
    const colon = field.indexOf(':');
    if (colon > 0) {
      const name = field.slice(0, colon).trim().toLowerCase();
      const value = field.slice(colon + 1).replace(/\r?\n/g, '');
      if (!headers.has(name)) {
        headers.set(name, { value, start: start + fieldStart, end: start + fieldEnd });
      }
    }
    fieldStart = fieldEnd + eol.length;
  }
  return { headers, headerStart: start, bodyStart: blank + 2 * eol.length, bodyEnd: end };
}

/** Whether the line at `index` is a delimiter line: `--boundary` then `--`, whitespace or its end. */
function isDelimiter(raw: Buffer, index: number, after: number, start: number): boolean {
  if (index !== start && raw[index - 1] !== LF) return false;
  const next = raw[after];
  return (
    next === undefined ||
    next === 0x2d ||
    next === LF ||
    next === CR ||
    next === 0x20 ||
    next === 0x09
  );
}

/** Where the line break ending the line at `index` ends, or `end`. */
function nextLine(raw: Buffer, index: number, end: number): number {
  const lf = raw.indexOf(LF, index);
  return lf === -1 || lf >= end ? end : lf + 1;
}

/**
 * The parts of a multipart body as [start, end) ranges (the line break before a delimiter belongs
 * to it), or null when the body has no delimiter or no close delimiter.
 */
export function multipartRanges(
  raw: Buffer,
  entity: MimeEntity,
  boundary: string,
): Array<[number, number]> | null {
  const dashBoundary = Buffer.from(`--${boundary}`, 'latin1');
  const { bodyStart, bodyEnd } = entity;
  const ranges: Array<[number, number]> = [];
  let partStart = -1;
  let from = bodyStart;
  for (;;) {
    const found = raw.indexOf(dashBoundary, from);
    if (found === -1 || found + dashBoundary.length > bodyEnd) return null;
    const after = found + dashBoundary.length;
    from = after;
    if (!isDelimiter(raw, found, after, bodyStart)) continue;
    if (partStart !== -1) {
      const breakLength = raw[found - 2] === CR ? 2 : 1;
      ranges.push([partStart, Math.max(partStart, found - breakLength)]);
    }
    if (raw[after] === 0x2d && raw[after + 1] === 0x2d) return ranges;
    partStart = nextLine(raw, after, bodyEnd);
  }
}

/**
 * The message's text/html leaf parts that are not attachments, in document order, or null when
 * its MIME structure is malformed (a multipart without boundary or close delimiter, a part whose
 * header block has no end, nesting too deep). Parts of attached messages (message/rfc822) are
 * not looked into.
 */
export function htmlLeaves(raw: Buffer, eol: string): MimeEntity[] | null {
  const message = parseEntity(raw, 0, raw.length, eol);
  if (!message) return null;
  const leaves: MimeEntity[] = [];
  return collectHtml(raw, message, eol, 0, leaves) ? leaves : null;
}

function collectHtml(
  raw: Buffer,
  entity: MimeEntity,
  eol: string,
  depth: number,
  leaves: MimeEntity[],
): boolean {
  const contentType = parseContentType(entity.headers.get('content-type')?.value ?? 'text/plain');
  if (contentType.type.startsWith('multipart/')) {
    const boundary = contentType.params.get('boundary');
    if (!boundary || depth >= MAX_DEPTH) return false;
    const ranges = multipartRanges(raw, entity, boundary);
    if (!ranges) return false;
    for (const [start, end] of ranges) {
      const part = parseEntity(raw, start, end, eol);
      if (!part || !collectHtml(raw, part, eol, depth + 1, leaves)) return false;
    }
    return true;
  }
  const disposition = entity.headers.get('content-disposition')?.value.trim().toLowerCase() ?? '';
  if (contentType.type === 'text/html' && !disposition.startsWith('attachment')) {
    leaves.push(entity);
  }
  return true;
}
