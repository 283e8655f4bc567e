import type { Readable } from 'node:stream';

import type {
  AddressObject,
  AttachmentStream,
  HeaderLines,
  Headers,
  MessageText,
} from 'mailparser';
import { MailParser } from 'mailparser';

import type { InboundLimits } from './inbound-limits';
import { DEFAULT_INBOUND_LIMITS, InboundMessageRejected } from './inbound-limits';
import { scanMimeStructure } from './mime-structure';
import type {
  HeaderField,
  MailboxAddress,
  ParsedAttachment,
  ParsedInboundMessage,
} from './parsed-inbound-message';

/** Bytes handed to the parser at once: small enough for the deadline to be checked often. */
const FEED_CHUNK_BYTES = 64 * 1024;

function unfold(line: string): string {
  return line.replace(/\r?\n[ \t]+/g, ' ').trim();
}

function headerFieldsOf(lines: HeaderLines): HeaderField[] {
  return lines.map(({ line }) => {
    const colon = line.indexOf(':');
    return { name: line.slice(0, colon).trim(), value: unfold(line.slice(colon + 1)) };
  });
}

function mailboxesOf(value: unknown): MailboxAddress[] {
  const objects = ([] as unknown[]).concat(value ?? []) as AddressObject[];
  const mailboxes: MailboxAddress[] = [];
  for (const object of objects) {
    for (const entry of object.value ?? []) {
      for (const member of entry.group ?? [entry]) {
        if (member.address) mailboxes.push({ name: member.name ?? '', address: member.address });
      }
    }
  }
  return mailboxes;
}

function rawHeader(headers: Headers, name: string): string {
  const value = headers.get(name);
  if (value === undefined) return '';
  if (typeof value === 'string') return value;
  if (
    typeof value === 'object' &&
    !Array.isArray(value) &&
    !(value instanceof Date) &&
    'value' in value
  ) {
    return typeof value.value === 'string' ? value.value : '';
  }
  return '';
}

/** Bounds, deadline and running totals of one parse. */
class ParseBudget {
  private decodedBytes = 0;
  private attachmentBytes = 0;
  private readonly deadline: number;

  constructor(private readonly limits: InboundLimits) {
    this.deadline = Date.now() + limits.parseTimeoutMs;
  }

  /** Throws once the deadline has passed, or at once when `expired` (the timer fired). */
  checkTime(expired = false): void {
    if (expired || Date.now() >= this.deadline) {
      throw new InboundMessageRejected(
        'parse_timeout',
        `not parsed within ${this.limits.parseTimeoutMs} ms`,
      );
    }
  }

  addText(characters: number): void {
    this.addDecoded(characters);
  }

  addAttachment(bytes: number): void {
    this.addDecoded(bytes);
    this.attachmentBytes += bytes;
    if (this.attachmentBytes > this.limits.maxAttachmentBytes) {
      throw new InboundMessageRejected(
        'attachments_too_large',
        `attachments decode to more than ${this.limits.maxAttachmentBytes} bytes`,
      );
    }
  }

  private addDecoded(bytes: number): void {
    this.decodedBytes += bytes;
    if (this.decodedBytes > this.limits.maxDecodedBytes) {
      throw new InboundMessageRejected(
        'decoded_too_large',
        `message decodes to more than ${this.limits.maxDecodedBytes} bytes`,
      );
    }
  }
}

interface ParserOutput {
  headers: Headers;
  headerLines: HeaderLines;
  text: MessageText | null;
  attachments: ParsedAttachment[];
}

function rejectionOf(error: unknown): InboundMessageRejected {
  if (error instanceof InboundMessageRejected) return error;
  return new InboundMessageRejected(
    'malformed',
    error instanceof Error ? error.message : String(error),
  );
}

function attachmentOf(stream: AttachmentStream, content: Buffer): ParsedAttachment {
  return {
    filename: stream.filename ?? '',
    contentType: stream.contentType,
    contentId: rawHeader(stream.headers, 'content-id'),
    disposition: rawHeader(stream.headers, 'content-disposition'),
    content,
  };
}

function drainedOrClosed(parser: MailParser): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (): void => {
      parser.off('drain', done);
      parser.off('close', done);
      resolve();
    };
    parser.on('drain', done);
    parser.on('close', done);
  });
}

function runMailParser(raw: Buffer, limits: InboundLimits): Promise<ParserOutput> {
  const budget = new ParseBudget(limits);
  const parser = new MailParser({
    skipTextToHtml: true,
    skipImageLinks: true,
    skipTextLinks: true,
    maxHtmlLengthToParse: Math.min(limits.maxDecodedBytes, 2 * 1024 * 1024),
  });
  const output: ParserOutput = { headers: new Map(), headerLines: [], text: null, attachments: [] };

  return new Promise<ParserOutput>((resolve, reject) => {
    let settled = false;

    const abort = (error: unknown): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      parser.destroy();
      reject(rejectionOf(error));
    };
    const guarded = (step: () => void): void => {
      try {
        step();
      } catch (error) {
        abort(error);
      }
    };
    const timer = setTimeout(() => guarded(() => budget.checkTime(true)), limits.parseTimeoutMs);

    parser.on('headers', (headers: Headers) => (output.headers = headers));
    parser.on('headerLines', (lines: HeaderLines) => (output.headerLines = lines));
    parser.on('data', (data: AttachmentStream | MessageText) => {
      if (data.type === 'text') {
        const htmlLength = typeof data.html === 'string' ? data.html.length : 0;
        guarded(() => budget.addText(htmlLength + (data.text?.length ?? 0)));
        output.text = data;
        return;
      }
      const chunks: Buffer[] = [];
      const content = data.content as Readable;
      content.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        guarded(() => budget.addAttachment(chunk.length));
      });
      content.on('end', () =>
        guarded(() => {
          output.attachments.push(attachmentOf(data, Buffer.concat(chunks)));
          data.release();
        }),
      );
    });
    parser.on('error', abort);
    parser.on('end', () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(output);
    });

    void (async () => {
      for (let offset = 0; offset < raw.length && !settled; offset += FEED_CHUNK_BYTES) {
        guarded(() => budget.checkTime());
        if (settled) return;
        if (!parser.write(raw.subarray(offset, offset + FEED_CHUNK_BYTES))) {
          await drainedOrClosed(parser);
        }
      }
      if (!settled) parser.end();
    })();
  });
}

/**
 * Reads a received message within `limits` (items 43-44): a structural scan refuses deep
 * nesting, too many parts or header fields before anything is decoded; the streaming parse then
 * counts decoded bytes and watches a deadline, and stops at the first bound crossed. Compressed
 * attachments stay the bytes that were sent: nothing is ever decompressed. Rejects with an
 * {@link InboundMessageRejected} (whose `smtpReply` the MX answers with), never truncates.
 */
export async function parseInboundMessage(
  raw: Buffer,
  limits: InboundLimits = DEFAULT_INBOUND_LIMITS,
): Promise<ParsedInboundMessage> {
  if (raw.length > limits.maxMessageBytes) {
    throw new InboundMessageRejected(
      'message_too_large',
      `message larger than ${limits.maxMessageBytes} bytes`,
    );
  }
  const structure = scanMimeStructure(raw, limits);
  const output = await runMailParser(raw, limits);
  const html = output.text?.html;
  return {
    headers: headerFieldsOf(output.headerLines),
    from: mailboxesOf(output.headers.get('from')),
    replyTo: mailboxesOf(output.headers.get('reply-to')),
    to: mailboxesOf(output.headers.get('to')),
    cc: mailboxesOf(output.headers.get('cc')),
    subject: rawHeader(output.headers, 'subject'),
    html: typeof html === 'string' ? html : '',
    text: output.text?.text ?? '',
    contentType: rawHeader(output.headers, 'content-type').toLowerCase() || 'text/plain',
    leafContentTypes: structure.leafContentTypes,
    attachments: output.attachments,
  };
}
