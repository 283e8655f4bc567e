import type { InboundLimits } from './inbound-limits';
import { InboundMessageRejected } from './inbound-limits';

/** What a scan learned about a message's MIME tree. */
export interface MimeStructure {
  /** MIME entities, the top-level one included. */
  parts: number;
  /** The deepest entity; the top-level one is 0. */
  depth: number;
  /** Lowercased content types of the leaf entities, in order. */
  leafContentTypes: string[];
}

type StructureLimits = Pick<InboundLimits, 'maxParts' | 'maxDepth' | 'maxHeaders'>;

interface OpenMultipart {
  delimiter: string;
  /** Depth of the multipart entity itself; its parts are one deeper. */
  depth: number;
}

interface HeaderBlock {
  depth: number;
  fields: number;
  contentType: string;
  transferEncoding: string;
}

const BOUNDARY_PARAMETER = /;\s*boundary\s*=\s*(?:"([^"]*)"|([^;\s]+))/i;

function newHeaderBlock(depth: number): HeaderBlock {
  return { depth, fields: 0, contentType: '', transferEncoding: '' };
}

function mediaTypeOf(contentType: string): string {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase() || 'text/plain';
}

/**
 * One linear pass over the raw bytes that counts entities, nesting and header fields before any
 * decoding happens, so a MIME bomb is refused in time proportional to its size and with no
 * allocation beyond one string of it. Throws {@link InboundMessageRejected} on the first bound
 * crossed.
 */
export function scanMimeStructure(raw: Buffer, limits: StructureLimits): MimeStructure {
  const text = raw.toString('latin1');
  const open: OpenMultipart[] = [];
  const leafContentTypes: string[] = [];
  let parts = 1;
  let depth = 0;
  let block: HeaderBlock | null = newHeaderBlock(0);
  let lastField: 'content-type' | 'content-transfer-encoding' | 'other' = 'other';

  const enter = (entityDepth: number): HeaderBlock => {
    if (entityDepth > limits.maxDepth) {
      throw new InboundMessageRejected('too_deep', `MIME nesting deeper than ${limits.maxDepth}`);
    }
    depth = Math.max(depth, entityDepth);
    lastField = 'other';
    return newHeaderBlock(entityDepth);
  };

  const endHeaders = (ended: HeaderBlock): HeaderBlock | null => {
    const mediaType = mediaTypeOf(ended.contentType);
    const boundary = BOUNDARY_PARAMETER.exec(ended.contentType);
    const delimiter = boundary?.[1] ?? boundary?.[2];
    if (mediaType.startsWith('multipart/') && delimiter) {
      open.push({ delimiter: `--${delimiter}`, depth: ended.depth });
      return null;
    }
    const encoding = ended.transferEncoding.trim().toLowerCase();
    if (
      mediaType === 'message/rfc822' &&
      encoding !== 'base64' &&
      encoding !== 'quoted-printable'
    ) {
      return enter(ended.depth + 1);
    }
    leafContentTypes.push(mediaType);
    return null;
  };

  const startsPart = (line: string): boolean => {
    for (let index = open.length - 1; index >= 0; index -= 1) {
      const multipart = open[index];
      if (!multipart || !line.startsWith(multipart.delimiter)) continue;
      const rest = line.slice(multipart.delimiter.length).trimEnd();
      if (rest === '--') {
        open.length = index;
        return true;
      }
      if (rest === '') {
        open.length = index + 1;
        parts += 1;
        if (parts > limits.maxParts) {
          throw new InboundMessageRejected(
            'too_many_parts',
            `more than ${limits.maxParts} MIME parts`,
          );
        }
        block = enter(multipart.depth + 1);
        return true;
      }
    }
    return false;
  };

  let start = 0;
  while (start < text.length) {
    const newline = text.indexOf('\n', start);
    const end = newline === -1 ? text.length : newline;
    const line = text.slice(start, end).replace(/\r$/, '');
    start = end + 1;

    if (line.startsWith('--') && open.length > 0 && startsPart(line)) continue;
    if (!block) continue;
    if (line === '') {
      block = endHeaders(block);
      continue;
    }
    if (line.startsWith(' ') || line.startsWith('\t')) {
      if (lastField === 'content-type') block.contentType += line;
      if (lastField === 'content-transfer-encoding') block.transferEncoding += line;
      continue;
    }
    block.fields += 1;
    if (block.fields > limits.maxHeaders) {
      throw new InboundMessageRejected(
        'too_many_headers',
        `more than ${limits.maxHeaders} header fields`,
      );
    }
    const colon = line.indexOf(':');
    const name = colon === -1 ? '' : line.slice(0, colon).trim().toLowerCase();
    const value = colon === -1 ? '' : line.slice(colon + 1);
    if (name === 'content-type') {
      lastField = 'content-type';
      block.contentType = value;
    } else if (name === 'content-transfer-encoding') {
      lastField = 'content-transfer-encoding';
      block.transferEncoding = value;
    } else {
      lastField = 'other';
    }
  }
  if (block) endHeaders(block);
  return { parts, depth, leafContentTypes };
}
