import { simpleParser } from 'mailparser';

import { analyseMail, type InboundReport, type MailParts } from './inbound-report';

/** The text of a report read at most: DSNs and ARF reports are small, their copies are not. */
const MAX_TEXT_CHARS = 256 * 1024;

/** The start of a part holding the returned message or its headers, up to its blank line. */
const ORIGINAL_PART =
  /^content-type:[ \t]*(?:message\/rfc822|text\/rfc822-headers|message\/global)\b[^\n]*\n(?:[^\n]*\S[^\n]*\n)*?\r?\n/gim;

/** Reads a received mail's bytes (mailparser) and says what it reports. */
export async function parseInboundMail(bytes: Buffer): Promise<InboundReport> {
  return analyseMail(await mailParts(bytes));
}

export async function mailParts(bytes: Buffer): Promise<MailParts> {
  const parsed = await simpleParser(bytes, { skipTextLinks: true });
  const headers = new Map<string, string>();
  for (const line of parsed.headerLines) {
    const name = line.key.toLowerCase();
    if (headers.has(name)) continue;
    const colon = line.line.indexOf(':');
    headers.set(
      name,
      line.line
        .slice(colon + 1)
        .replace(/\r?\n[ \t]+/g, ' ')
        .trim(),
    );
  }
  const text = parsed.text ?? (typeof parsed.html === 'string' ? htmlToText(parsed.html) : '');
  return {
    headers,
    text: text.slice(0, MAX_TEXT_CHARS),
    attachments: parsed.attachments.map((attachment) => ({
      contentType: attachment.contentType,
      content: attachment.content,
    })),
    originals: originalHeaderSections(bytes.subarray(0, MAX_TEXT_CHARS).toString('utf8')),
  };
}

/**
 * The header sections of the parts that return the original message (7-bit, as reports send
 * them): mailparser renders an inline message/rfc822 into the text, without its headers.
 */
function originalHeaderSections(raw: string): string[] {
  return [...raw.matchAll(ORIGINAL_PART)].map((match) => {
    const start = match.index + match[0].length;
    const end = raw.slice(start).search(/\r?\n\r?\n/);
    return raw.slice(start, end < 0 ? undefined : start + end);
  });
}

function htmlToText(html: string): string {
  return html.replace(/<[^>]*>/g, ' ');
}
