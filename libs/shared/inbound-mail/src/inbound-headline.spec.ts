import { mailFixture } from './__fixtures__/read-fixture';
import { checkInboundMessage } from './inbound-headline';
import { DEFAULT_INBOUND_LIMITS, InboundMessageRejected } from './inbound-limits';
import { parseInboundMessage } from './parse-inbound-message';
import { headerValue } from './parsed-inbound-message';

async function rejection(raw: string, limits = DEFAULT_INBOUND_LIMITS) {
  const error: unknown = await checkInboundMessage(Buffer.from(raw), limits).catch(
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(InboundMessageRejected);
  return (error as InboundMessageRejected).reason;
}

describe('checkInboundMessage', () => {
  it.each(['gmail-reply', 'postfix-dsn', 'spam'])(
    'reads the headline mailparser reads from %s',
    async (name) => {
      const raw = mailFixture(name);
      const parsed = await parseInboundMessage(raw);
      expect(await checkInboundMessage(raw, DEFAULT_INBOUND_LIMITS)).toEqual({
        from: parsed.from[0]?.address ?? '',
        subject: parsed.subject,
        messageId: headerValue(parsed, 'message-id'),
      });
    },
  );

  it('gives empty fields for a message without them', async () => {
    expect(await checkInboundMessage(Buffer.from('\r\nbody\r\n'), DEFAULT_INBOUND_LIMITS)).toEqual({
      from: '',
      subject: '',
      messageId: '',
    });
  });

  it('refuses deep nesting, too many parts and too many header fields', async () => {
    const nested = 'Content-Type: multipart/mixed; boundary="n"\r\n\r\n--n\r\n'.repeat(32);
    expect(await rejection(`Subject: deep\r\n${nested}\r\nx\r\n`)).toBe('too_deep');
    const parts = '--p\r\n\r\nx\r\n'.repeat(1001);
    expect(
      await rejection(`Content-Type: multipart/mixed; boundary="p"\r\n\r\n${parts}--p--\r\n`),
    ).toBe('too_many_parts');
    expect(await rejection(`${'X-Field: 1\r\n'.repeat(1001)}\r\nbody\r\n`)).toBe(
      'too_many_headers',
    );
  });

  it('refuses a message over the size limit', async () => {
    const limits = { ...DEFAULT_INBOUND_LIMITS, maxMessageBytes: 100 };
    expect(await rejection(`Subject: big\r\n\r\n${'x'.repeat(200)}\r\n`, limits)).toBe(
      'message_too_large',
    );
  });

  it('decodes a message larger than the decoded bounds to enforce them', async () => {
    const attachment = Buffer.alloc(3000, 1).toString('base64').replace(/.{76}/g, '$&\r\n');
    const raw = [
      'Content-Type: multipart/mixed; boundary="b"',
      '',
      '--b',
      'Content-Type: text/plain',
      '',
      'see attached',
      '--b',
      'Content-Type: application/octet-stream',
      'Content-Transfer-Encoding: base64',
      '',
      attachment,
      '--b--',
      '',
    ].join('\r\n');
    const within = { ...DEFAULT_INBOUND_LIMITS, maxAttachmentBytes: 3000 };
    await expect(checkInboundMessage(Buffer.from(raw), within)).resolves.toMatchObject({
      subject: '',
    });
    expect(await rejection(raw, { ...within, maxAttachmentBytes: 2999 })).toBe(
      'attachments_too_large',
    );
  });
});
