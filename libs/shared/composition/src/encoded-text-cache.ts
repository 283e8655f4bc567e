/** How many encoded texts are kept, and their text length in all (UTF-16 code units). */
export interface EncodedTextCacheLimits {
  maxEntries: number;
  maxTextLength: number;
}

/**
 * Text parts encoded for a transfer encoding, by text: the messages of a send share their
 * parts' texts (without per-recipient substitutions or tracking), and each is encoded once
 * rather than once per recipient. Bounded: a text longer than the whole budget is never kept,
 * and the cache starts over when the next one would not fit. The encoded bytes are shared: a
 * caller never changes them.
 */
export class EncodedTextCache {
  private readonly byEncoding = new Map<string, Map<string, Buffer>>();
  private entries = 0;
  private textLength = 0;

  constructor(private readonly limits: EncodedTextCacheLimits) {}

  /** The text's bytes in `encoding`, encoded with `encode` unless they are kept. */
  encoded(encoding: string, text: string, encode: (text: string) => Buffer): Buffer {
    const kept = this.byEncoding.get(encoding)?.get(text);
    if (kept) return kept;
    const bytes = encode(text);
    if (text.length > this.limits.maxTextLength) return bytes;
    if (
      this.entries >= this.limits.maxEntries ||
      this.textLength + text.length > this.limits.maxTextLength
    ) {
      this.clear();
    }
    let texts = this.byEncoding.get(encoding);
    if (!texts) {
      texts = new Map();
      this.byEncoding.set(encoding, texts);
    }
    texts.set(text, bytes);
    this.entries++;
    this.textLength += text.length;
    return bytes;
  }

  /** Texts kept now. */
  get size(): number {
    return this.entries;
  }

  private clear(): void {
    this.byEncoding.clear();
    this.entries = 0;
    this.textLength = 0;
  }
}
