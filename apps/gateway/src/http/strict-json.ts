import { isUtf8 } from 'node:buffer';

/** Objects and arrays may nest this deep; a deeper body is refused before anything walks it. */
export const MAX_JSON_DEPTH = 64;

/** Keys that would reach an object's prototype when a parsed body is merged or transformed. */
const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor']);

const KEY_IN_MESSAGE_MAX_LENGTH = 64;

export const STRICT_JSON_MESSAGES = {
  empty: 'request body is empty',
  notUtf8: 'request body is not valid UTF-8',
  notJson: 'request body is not valid JSON',
  tooDeep: `JSON nesting is deeper than ${MAX_JSON_DEPTH} levels`,
  nul: 'strings must not contain NUL characters',
  loneSurrogate: 'strings must not contain unpaired UTF-16 surrogates',
  duplicateKey: (key: string) => `duplicate key ${quoted(key)} in JSON object`,
  forbiddenKey: (key: string) => `key ${quoted(key)} is not allowed in JSON objects`,
} as const;

/** Why a request body is refused; the message is safe to show to the client. */
export class StrictJsonError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StrictJsonError';
  }
}

const BYTE_ORDER_MARK = 0xfeff;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const LETTER_U = 0x75;

/**
 * Parses a request body as JSON that is safe to hand to the rest of the platform: UTF-8, objects
 * and arrays at most MAX_JSON_DEPTH deep, no duplicate or prototype-reaching keys, and no string
 * (key or value) holding NUL or an unpaired surrogate, which PostgreSQL text cannot store.
 */
export function parseStrictJson(body: Buffer): unknown {
  if (body.length === 0) throw new StrictJsonError(STRICT_JSON_MESSAGES.empty);
  if (!isUtf8(body)) throw new StrictJsonError(STRICT_JSON_MESSAGES.notUtf8);
  let text = body.toString('utf8');
  if (text.charCodeAt(0) === BYTE_ORDER_MARK) text = text.slice(1);
  checkStructure(text);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new StrictJsonError(STRICT_JSON_MESSAGES.notJson);
  }
}

/**
 * One pass over the text before JSON.parse builds anything. It checks only what JSON.parse
 * does not (depth, keys, string contents) and leaves the grammar to JSON.parse: on text that
 * is not JSON it may stop early or miss a problem, and the body is refused either way.
 *
 * Valid UTF-8 cannot encode a surrogate, so only `\u` escapes can make an unpaired one.
 */
function checkStructure(text: string): void {
  const length = text.length;
  // One entry per open container: the keys seen so far in an object, null for an array.
  const open: (Set<string> | null)[] = [];
  const strings = new StringScanner(text);
  let expectingKey = false;
  let index = 0;
  while (index < length) {
    const code = text.charCodeAt(index);
    if (code === QUOTE) {
      const end = strings.endOf(index + 1);
      if (expectingKey) {
        checkKey(text, index, end, open[open.length - 1]);
        expectingKey = false;
      }
      index = end + 1;
      continue;
    }
    if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      if (open.length === MAX_JSON_DEPTH) throw new StrictJsonError(STRICT_JSON_MESSAGES.tooDeep);
      const isObject = code === OPEN_BRACE;
      open.push(isObject ? new Set<string>() : null);
      expectingKey = isObject;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      open.pop();
      expectingKey = false;
    } else if (code === COMMA) {
      expectingKey = open.length > 0 && open[open.length - 1] !== null;
    }
    index += 1;
  }
}

/**
 * Finds where strings end, refusing NUL and unpaired surrogates written as escapes. It jumps
 * with indexOf, much faster than reading each character of a long string (a base64
 * attachment), and remembers the next quote and backslash so that no character is searched
 * twice.
 */
class StringScanner {
  private nextBackslash: number;

  constructor(private readonly text: string) {
    this.nextBackslash = text.indexOf('\\');
  }

  /** The index of the quote closing the string whose contents start at `start`. */
  endOf(start: number): number {
    let index = start;
    let quote = -1;
    for (;;) {
      if (quote < index) quote = this.text.indexOf('"', index);
      if (quote === -1) return this.text.length;
      if (this.nextBackslash !== -1 && this.nextBackslash < index) {
        this.nextBackslash = this.text.indexOf('\\', index);
      }
      if (this.nextBackslash === -1 || this.nextBackslash > quote) return quote;
      index = this.nextBackslash + escapeLength(this.text, this.nextBackslash);
    }
  }
}

/** The length of the escape at `index`. */
function escapeLength(text: string, index: number): number {
  return text.charCodeAt(index + 1) === LETTER_U ? unicodeEscapeLength(text, index) : 2;
}

/** The length of the `\uXXXX` escape at `index`, twelve for an escaped surrogate pair. */
function unicodeEscapeLength(text: string, index: number): number {
  const unit = hexUnitAt(text, index + 2);
  if (unit === 0) throw new StrictJsonError(STRICT_JSON_MESSAGES.nul);
  if (unit < 0xd800 || unit > 0xdfff) return 6;
  const isHigh = unit <= 0xdbff;
  const next =
    text.charCodeAt(index + 6) === BACKSLASH && text.charCodeAt(index + 7) === LETTER_U
      ? hexUnitAt(text, index + 8)
      : -1;
  if (isHigh && next >= 0xdc00 && next <= 0xdfff) return 12;
  throw new StrictJsonError(STRICT_JSON_MESSAGES.loneSurrogate);
}

/** The UTF-16 unit of the four hex digits at `index`, or -1 when they are not four hex digits. */
function hexUnitAt(text: string, index: number): number {
  let unit = 0;
  for (let offset = 0; offset < 4; offset += 1) {
    const digit = hexDigitValue(text.charCodeAt(index + offset));
    if (digit < 0) return -1;
    unit = unit * 16 + digit;
  }
  return unit;
}

function hexDigitValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  const lower = code | 0x20;
  if (lower >= 0x61 && lower <= 0x66) return lower - 0x61 + 10;
  return -1;
}

function checkKey(
  text: string,
  openingQuote: number,
  closingQuote: number,
  seen: Set<string> | null | undefined,
): void {
  const key = decodedKey(text, openingQuote, closingQuote);
  if (FORBIDDEN_KEYS.has(key)) throw new StrictJsonError(STRICT_JSON_MESSAGES.forbiddenKey(key));
  if (seen === null || seen === undefined) return;
  if (seen.has(key)) throw new StrictJsonError(STRICT_JSON_MESSAGES.duplicateKey(key));
  seen.add(key);
}

/** The key as JSON.parse will read it, so `"a"` and `"\u0061"` are the same key. */
function decodedKey(text: string, openingQuote: number, closingQuote: number): string {
  const raw = text.slice(openingQuote + 1, closingQuote);
  if (!raw.includes('\\')) return raw;
  try {
    return JSON.parse(text.slice(openingQuote, closingQuote + 1)) as string;
  } catch {
    throw new StrictJsonError(STRICT_JSON_MESSAGES.notJson);
  }
}

function quoted(key: string): string {
  const shown =
    key.length > KEY_IN_MESSAGE_MAX_LENGTH ? `${key.slice(0, KEY_IN_MESSAGE_MAX_LENGTH)}…` : key;
  return JSON.stringify(shown);
}
