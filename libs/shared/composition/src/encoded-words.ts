/**
 * RFC 2047 encoded words (`=?charset?B|Q?text?=`): decoded to check that a header-bound value
 * does not smuggle a line break through an encoded word, and to show parsed headers readably.
 */

const ENCODED_WORD = /=\?([^?\s]+)\?([BbQq])\?([^?\s]*)\?=/g;

interface Segment {
  text: string;
  /** Set when the segment is an encoded word. */
  word?: { charset: string; bytes: Buffer };
}

/** Decodes every encoded word of a header value; words that cannot be decoded are kept as is. */
export function decodeEncodedWords(value: string): string {
  if (!value.includes('=?')) return value;
  const segments: Segment[] = [];
  let last = 0;
  for (const match of value.matchAll(ENCODED_WORD)) {
    const [word, charsetSpec = '', encoding = '', text = ''] = match;
    if (match.index > last) segments.push({ text: value.slice(last, match.index) });
    // RFC 2231 allows a language after the charset: `utf-8*en`.
    const charset = charsetSpec.split('*')[0]?.toLowerCase() ?? '';
    const bytes = encoding.toUpperCase() === 'B' ? Buffer.from(text, 'base64') : decodeQ(text);
    segments.push({ text: word, word: { charset, bytes } });
    last = match.index + word.length;
  }
  if (last < value.length) segments.push({ text: value.slice(last) });

  let out = '';
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i];
    if (!segment) continue;
    const word = segment.word;
    if (!word) {
      // Whitespace between two encoded words is not part of the text (RFC 2047 section 6.2).
      const between = segments[i - 1]?.word && segments[i + 1]?.word && /^\s+$/.test(segment.text);
      if (!between) out += segment.text;
      continue;
    }
    // Adjacent words of one charset are joined first: a character may be split across them.
    const parts = [word.bytes];
    while (true) {
      const gap = segments[i + 1];
      const next = gap?.word ? gap : /^\s+$/.test(gap?.text ?? 'x') ? segments[i + 2] : undefined;
      if (!next?.word || next.word.charset !== word.charset) break;
      parts.push(next.word.bytes);
      i += next === gap ? 1 : 2;
    }
    out += decodeCharset(word.charset, Buffer.concat(parts)) ?? segment.text;
  }
  return out;
}

function decodeQ(text: string): Buffer {
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    const hex = char === '=' ? text.slice(i + 1, i + 3) : '';
    if (/^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(char === '_' ? 0x20 : text.charCodeAt(i) & 0xff);
    }
  }
  return Buffer.from(bytes);
}

function decodeCharset(charset: string, bytes: Buffer): string | undefined {
  try {
    return new TextDecoder(charset).decode(bytes);
  } catch {
    // An unknown charset: latin1 still shows CR, LF and NUL for what they are.
    return bytes.toString('latin1');
  }
}
