/** One block of `Name: value` fields (RFC 822 style, folded lines joined), names lowercased. */
export type FieldBlock = ReadonlyMap<string, string>;

const FIELD = /^([A-Za-z][A-Za-z0-9-]*):[ \t]*(.*)$/;

/**
 * The field blocks of a text, each a run of `Name: value` lines ended by a blank line (the
 * per-message and per-recipient groups of a delivery-status or feedback-report part). Lines that
 * are no fields end nothing: prose around the blocks is skipped.
 */
export function fieldBlocks(text: string): FieldBlock[] {
  const blocks: FieldBlock[] = [];
  let current = new Map<string, string>();
  let last: string | null = null;
  const close = () => {
    if (current.size > 0) blocks.push(current);
    current = new Map();
    last = null;
  };
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === '') {
      close();
      continue;
    }
    if (/^[ \t]/.test(line) && last !== null) {
      current.set(last, `${current.get(last) ?? ''} ${line.trim()}`);
      continue;
    }
    const match = FIELD.exec(line);
    if (!match?.[1]) {
      last = null;
      continue;
    }
    last = match[1].toLowerCase();
    // The first occurrence wins (a block names each field once).
    if (!current.has(last)) current.set(last, (match[2] ?? '').trim());
  }
  close();
  return blocks;
}

/** `rfc822; a@example.com` → `a@example.com`; the value itself when it has no type. */
export function typedValue(value: string | undefined): string | null {
  if (value === undefined) return null;
  const semicolon = value.indexOf(';');
  const bare = (semicolon < 0 ? value : value.slice(semicolon + 1)).trim();
  return bare === '' ? null : bare;
}

/** An address without its angle brackets, lowercased; null when it holds no `@`. */
export function bareAddress(value: string | null | undefined): string | null {
  if (!value) return null;
  const bracketed = /<([^<>\s]+@[^<>\s]+)>/.exec(value);
  const address = (bracketed?.[1] ?? value).trim().replace(/^<|>$/g, '');
  return /^[^\s@]+@[^\s@]+$/.test(address) ? address.toLowerCase() : null;
}
