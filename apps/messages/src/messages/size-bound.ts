import type { ComposeAddress, MessageTemplates } from '@envoi/shared-composition';

/** The values of a message that may differ between the messages of one send. */
export interface SizeParts {
  to: readonly ComposeAddress[];
  cc?: readonly ComposeAddress[];
  /** As rendered, before tracking. */
  content: MessageTemplates;
  /** Bytes of the HTML once tracked (0 without HTML). */
  trackedHtmlBytes: number;
}

/**
 * Bytes one byte of a header or body value can take once encoded, at most: quoted-printable
 * writes a byte as `=XX` with a soft line break every 76 characters (≤ 3.2), an RFC 2047 encoded
 * word adds its `=?UTF-8?Q?…?=` frame and folding to that (≤ 4.2), base64 takes 1.4.
 */
const ENCODED_BYTES_PER_BYTE = 5;
/** Bytes a part's own headers and boundaries can add when a value makes the part appear. */
const PART_OVERHEAD_BYTES = 1024;

type TextField = 'subject' | 'text' | 'amp';
const TEXT_FIELDS: readonly TextField[] = ['subject', 'text', 'amp'];

function addressBytes(addresses: readonly ComposeAddress[] | undefined): number {
  let bytes = 0;
  for (const { email, name } of addresses ?? []) {
    bytes += Buffer.byteLength(email, 'utf8') + Buffer.byteLength(name ?? '', 'utf8') + 4;
  }
  return bytes;
}

function sameAddresses(
  a: readonly ComposeAddress[] | undefined,
  b: readonly ComposeAddress[] | undefined,
): boolean {
  if (a === b) return true;
  if (!a || !b || a.length !== b.length) return false;
  return a.every((address, index) => {
    const other = b[index];
    return other?.email === address.email && (other.name ?? '') === (address.name ?? '');
  });
}

/** What replacing a value of `given` bytes by one of `other` bytes can add to the message. */
function growth(given: number, other: number): number {
  return ENCODED_BYTES_PER_BYTE * other + PART_OVERHEAD_BYTES - given;
}

function bytesOf(value: string | undefined): number {
  return value === undefined ? 0 : Buffer.byteLength(value, 'utf8');
}

/**
 * An upper bound of the size of `other` once composed, knowing that `representative`, a message
 * of the same send (same sender, headers and attachments), composed to `representativeSize`
 * bytes. Only the values that differ count: an encoded value is never shorter than its bytes, and
 * never longer than {@link ENCODED_BYTES_PER_BYTE} times them plus a part's framing. The same
 * HTML tracked for another message differs only in tokens of the same length and alphabet, so
 * it encodes to the same size.
 */
export function composedSizeBound(
  representativeSize: number,
  representative: SizeParts,
  other: SizeParts,
): number {
  let bound = representativeSize;
  if (!sameAddresses(representative.to, other.to) || !sameAddresses(representative.cc, other.cc)) {
    bound += growth(
      addressBytes(representative.to) + addressBytes(representative.cc),
      addressBytes(other.to) + addressBytes(other.cc),
    );
  }
  for (const field of TEXT_FIELDS) {
    const given = representative.content[field];
    const value = other.content[field];
    if (given !== value) bound += growth(bytesOf(given), bytesOf(value));
  }
  if (representative.content.html !== other.content.html) {
    bound += growth(representative.trackedHtmlBytes, other.trackedHtmlBytes);
  }
  return bound;
}
