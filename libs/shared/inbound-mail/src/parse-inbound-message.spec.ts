import { gzipSync } from 'node:zlib';

import { mailFixture } from './__fixtures__/read-fixture';
import type { InboundLimits } from './inbound-limits';
import { DEFAULT_INBOUND_LIMITS, InboundMessageRejected } from './inbound-limits';
import { parseInboundMessage } from './parse-inbound-message';

const CRLF = '\r\n';

function message(headers: string[], body: string): Buffer {
  return Buffer.from([...headers, '', body].join(CRLF));
}

function withAttachment(attachment: Buffer, contentType = 'application/octet-stream'): Buffer {
  return message(
    ['From: a@example.com', 'Content-Type: multipart/mixed; boundary="b"'],
    [
      '--b',
      'Content-Type: text/plain',
      '',
      'see attached',
      '--b',
      `Content-Type: ${contentType}; name="file.bin"`,
      'Content-Disposition: attachment; filename="file.bin"',
      'Content-Transfer-Encoding: base64',
      '',
      attachment.toString('base64').replace(/.{76}/g, `$&${CRLF}`),
      '--b--',
    ].join(CRLF),
  );
}

/** JavaScript heap and Buffer memory in use. */
function allocatedBytes(): number {
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}

async function rejectionOf(
  raw: Buffer,
  limits: InboundLimits = DEFAULT_INBOUND_LIMITS,
): Promise<InboundMessageRejected> {
  const error = await parseInboundMessage(raw, limits).then(
    () => null,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof InboundMessageRejected))
    throw new Error(`expected a rejection, got ${String(error)}`);
  return error;
}

describe('parseInboundMessage', () => {
  it('reads headers, addresses, bodies and every attachment of a Gmail-shaped reply', async () => {
    const parsed = await parseInboundMessage(mailFixture('gmail-reply'));

    expect(parsed.from).toEqual([{ name: 'Maria Lopez', address: 'maria@example.com' }]);
    expect(parsed.to.map((mailbox) => mailbox.address)).toEqual([
      'support@yourdomain.test',
      'ticket-42@yourdomain.test',
    ]);
    expect(parsed.cc).toEqual([
      { name: 'Lopez, Carlos', address: 'carlos@example.com' },
      { name: '', address: 'team@example.com' },
    ]);
    expect(parsed.subject).toBe('Re: Help with my account ✓');
    expect(parsed.contentType).toBe('multipart/mixed');
    expect(parsed.leafContentTypes).toEqual([
      'text/plain',
      'text/html',
      'image/png',
      'application/pdf',
    ]);
    expect(parsed.text).toContain('Thanks, that fixed it.');
    expect(parsed.html).toBe('<p>Thanks, that fixed it.</p><img src="cid:logo+1%40mail">');
    expect(parsed.headers.find((field) => field.name === 'References')?.value).toBe(
      '<ticket-41@yourdomain.test> <ticket-42@yourdomain.test>',
    );
    expect(
      parsed.attachments.map(({ filename, contentType, contentId, disposition }) => ({
        filename,
        contentType,
        contentId,
        disposition,
      })),
    ).toEqual([
      {
        filename: 'logo.png',
        contentType: 'image/png',
        contentId: '<logo+1%40mail>',
        disposition: '',
      },
      {
        filename: 'invoice.pdf',
        contentType: 'application/pdf',
        contentId: '',
        disposition: 'ATTACHMENT',
      },
    ]);
    expect(parsed.attachments[1]?.content.toString('latin1')).toBe('%PDF-1.4\n');
  });

  it('keeps a compressed attachment as the bytes that were sent and never inflates it', async () => {
    const zipBomb = gzipSync(Buffer.alloc(50 * 1024 * 1024));
    const limits = {
      ...DEFAULT_INBOUND_LIMITS,
      maxDecodedBytes: 1024 * 1024,
      maxAttachmentBytes: 1024 * 1024,
    };

    const parsed = await parseInboundMessage(withAttachment(zipBomb, 'application/gzip'), limits);

    expect(parsed.attachments[0]?.content.equals(zipBomb)).toBe(true);
  });

  describe('MIME bombs (items 43-44) are refused quickly and whole', () => {
    const limits: InboundLimits = {
      ...DEFAULT_INBOUND_LIMITS,
      maxDecodedBytes: 2 * 1024 * 1024,
      maxAttachmentBytes: 1024 * 1024,
    };

    it.each([
      [
        'deep nesting',
        'too_deep',
        () => {
          const levels = 5000;
          const opening = Array.from({ length: levels }, (_, level) =>
            [`Content-Type: multipart/mixed; boundary="n${level}"`, '', `--n${level}`].join(CRLF),
          );
          return Buffer.from(
            ['From: a@example.com', ...opening, 'Content-Type: text/plain', '', 'deep'].join(CRLF),
          );
        },
      ],
      [
        'thousands of parts',
        'too_many_parts',
        () =>
          message(
            ['From: a@example.com', 'Content-Type: multipart/mixed; boundary="p"'],
            `${Array.from({ length: 20_000 }, () => `--p${CRLF}Content-Type: text/plain${CRLF}${CRLF}x`).join(CRLF)}${CRLF}--p--`,
          ),
      ],
      [
        'thousands of header fields',
        'too_many_headers',
        () =>
          message(
            ['From: a@example.com', ...Array.from({ length: 5000 }, (_, n) => `X-Filler-${n}: y`)],
            'body',
          ),
      ],
      [
        'an attachment that decodes past the bound',
        'attachments_too_large',
        () => withAttachment(Buffer.alloc(8 * 1024 * 1024, 7)),
      ],
      [
        'a body that decodes past the bound',
        'decoded_too_large',
        () =>
          message(['From: a@example.com', 'Content-Type: text/plain'], 'y'.repeat(3 * 1024 * 1024)),
      ],
      [
        'a message larger than the size bound',
        'message_too_large',
        () => Buffer.alloc(limits.maxMessageBytes + 1, 0x61),
      ],
    ])('%s → %s', async (_name, reason, build) => {
      const raw = build();
      const memoryBefore = allocatedBytes();
      const startedAt = Date.now();

      const rejection = await rejectionOf(raw, limits);

      expect(rejection.reason).toBe(reason);
      expect(Date.now() - startedAt).toBeLessThan(3000);
      expect(allocatedBytes() - memoryBefore).toBeLessThan(256 * 1024 * 1024);
    });

    it('answers 552 5.3.4 for sizes and 554 5.6.0 for structures', async () => {
      const tooBig = await rejectionOf(withAttachment(Buffer.alloc(2 * 1024 * 1024)), limits);
      const tooDeep = await rejectionOf(mailFixture('gmail-reply'), { ...limits, maxDepth: 1 });

      expect(tooBig.smtpReply).toMatchObject({ code: 552, enhancedCode: '5.3.4' });
      expect(tooDeep.smtpReply).toMatchObject({ code: 554, enhancedCode: '5.6.0' });
    });

    it('gives up at the deadline', async () => {
      const raw = message(
        ['From: a@example.com', 'Content-Type: text/plain'],
        'z'.repeat(256 * 1024),
      );

      const rejection = await rejectionOf(raw, { ...limits, parseTimeoutMs: 0 });

      expect(rejection.reason).toBe('parse_timeout');
    });
  });
});
