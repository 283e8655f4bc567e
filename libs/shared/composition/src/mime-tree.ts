import type MimeNode from 'nodemailer/lib/mime-node';

import { EncodedTextCache } from './encoded-text-cache';
import { nodemailerQuotedPrintable } from './mime-tree-qp';
import { encodeBase64Lines } from './transfer-encoding';

const CRLF = '\r\n';
const LF = 0x0a;
const CR = 0x0d;
/**
 * The text parts of the last messages composed, encoded (a send's messages share theirs): 64
 * texts, 1 Mi characters in all at most.
 */
const encodedTexts = new EncodedTextCache({ maxEntries: 64, maxTextLength: 1024 * 1024 });

/**
 * The bytes Nodemailer's `MimeNode.build()` gives for a tree of string and Buffer contents,
 * written in one pass without its per-node stream pipelines: each node's own header block
 * (`buildHeaders()`), its content encoded as `getTransferEncoding()` says, its children between
 * boundary lines, and a final line break when the message does not end with one.
 */
export function buildMimeTree(root: MimeNode): Buffer {
  const chunks: Buffer[] = [];
  writeNode(root, chunks);
  return withFinalLineBreak(chunks);
}

/** The chunks as one message ending with a line break (as `MimeNode.build()` ends one). */
export function withFinalLineBreak(chunks: Buffer[]): Buffer {
  const last = chunks.at(-1);
  const lastByte = last?.[last.length - 1];
  if (lastByte === CR) chunks.push(Buffer.from('\n'));
  else if (lastByte !== LF) chunks.push(Buffer.from(CRLF));
  return Buffer.concat(chunks);
}

/** A text part's content in its transfer encoding (kept for the next messages of its send). */
export function encodedText(text: string, transferEncoding: string | false): Buffer {
  return encodedTexts.encoded(String(transferEncoding), text, (content) =>
    encodedBytes(Buffer.from(content), transferEncoding, false),
  );
}

function writeNode(node: MimeNode, chunks: Buffer[]): void {
  const transferEncoding = node.getTransferEncoding();
  chunks.push(Buffer.from(node.buildHeaders() + CRLF + CRLF));
  if (node.content) chunks.push(encodedContent(node, transferEncoding));
  if (!node.multipart) return;
  const boundary = String(node.boundary);
  node.childNodes.forEach((child, index) => {
    chunks.push(Buffer.from(`${index > 0 ? CRLF : ''}--${boundary}${CRLF}`));
    writeNode(child, chunks);
  });
  chunks.push(Buffer.from(`${CRLF}--${boundary}--${CRLF}`));
}

function encodedContent(node: MimeNode, transferEncoding: string | false): Buffer {
  const { content } = node;
  const binary = !/^text\//i.test(node.contentType ?? '');
  if (typeof content === 'string' && !binary) return encodedText(content, transferEncoding);
  const bytes =
    typeof content === 'string' ? Buffer.from(content) : Buffer.isBuffer(content) ? content : null;
  if (!bytes) throw new Error('a MIME node built without streams needs string or Buffer content');
  return encodedBytes(bytes, transferEncoding, binary);
}

function encodedBytes(bytes: Buffer, transferEncoding: string | false, binary: boolean): Buffer {
  if (transferEncoding === 'base64') return Buffer.from(encodeBase64Lines(bytes, CRLF), 'latin1');
  if (transferEncoding === 'quoted-printable') {
    return Buffer.from(nodemailerQuotedPrintable(bytes, binary), 'latin1');
  }
  return bytes;
}
