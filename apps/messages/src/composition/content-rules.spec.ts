import type {
  AttachmentBody,
  CreateConversationBody,
  CreateMessageBody,
} from '@envoi/contracts-messages';
import { ContentRuleError, RESERVED_HEADERS } from '@envoi/shared-composition';

import { checkContentRules, customHeaders } from './content-rules';

function message(overrides: Partial<CreateMessageBody> = {}): CreateMessageBody {
  return {
    from: { email: 'news@example.com', name: 'Example' },
    recipients: [{ email: 'ann@example.net', name: 'Ann' }],
    subject: 'Hello',
    text_content: 'Hello Ann',
    ...overrides,
  };
}

function conversation(overrides: Partial<CreateConversationBody> = {}): CreateConversationBody {
  return {
    from: { email: 'news@example.com' },
    to: [{ email: 'ann@example.net' }],
    subject: 'Hello',
    html_content: '<p>Hello</p>',
    ...overrides,
  };
}

function file(overrides: Partial<AttachmentBody> = {}): AttachmentBody {
  return { data: 'hello', content_type: 'text/plain', file_name: 'hello.txt', ...overrides };
}

function rejection(run: () => void): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ContentRuleError);
    return (error as Error).message;
  }
  throw new Error('expected a ContentRuleError');
}

function encodedWord(text: string, encoding: 'B' | 'Q' = 'B'): string {
  const bytes = Buffer.from(text, 'utf8');
  const encoded =
    encoding === 'B'
      ? bytes.toString('base64')
      : [...bytes].map((byte) => `=${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');
  return `=?utf-8?${encoding}?${encoded}?=`;
}

describe('checkContentRules', () => {
  describe('rule 1: text_content or html_content', () => {
    it.each([
      ['neither', {}],
      ['both empty', { text_content: '', html_content: '' }],
      ['only AMP', { amp_content: '<html amp4email></html>' }],
    ])('rejects %s', (_case, content) => {
      const body = message({ text_content: undefined, ...content });
      expect(rejection(() => checkContentRules(body, 'message'))).toBe(
        'text_content or html_content must be non-empty',
      );
    });

    it.each([
      ['text only', { text_content: 'Hi' }],
      ['html only', { text_content: undefined, html_content: '<p>Hi</p>' }],
      ['empty text with html', { text_content: '', html_content: '<p>Hi</p>' }],
    ])('accepts %s', (_case, content) => {
      expect(() => checkContentRules(message(content), 'message')).not.toThrow();
    });

    it('applies to conversations too', () => {
      const body = conversation({ html_content: undefined });
      expect(rejection(() => checkContentRules(body, 'conversation'))).toBe(
        'text_content or html_content must be non-empty',
      );
    });
  });

  describe('rule 4: reply_to and a reply-to header', () => {
    it.each(['reply-to', 'Reply-To', 'REPLY-TO'])('rejects reply_to with a %s header', (name) => {
      const body = message({
        reply_to: { email: 'help@example.com' },
        headers: { [name]: 'x@y.z' },
      });
      expect(rejection(() => checkContentRules(body, 'message'))).toBe(
        'reply_to and a reply-to header cannot both be given',
      );
    });

    it('allows a reply-to header without reply_to', () => {
      const body = message({ headers: { 'Reply-To': 'help@example.com' } });
      expect(() => checkContentRules(body, 'message')).not.toThrow();
    });

    it('allows reply_to alone', () => {
      const body = message({ reply_to: { email: 'help@example.com', name: 'Help' } });
      expect(() => checkContentRules(body, 'message')).not.toThrow();
    });
  });

  describe('rule 5: message-id', () => {
    it.each(['message-id', 'Message-ID', 'MESSAGE-ID'])('accepts a %s header', (name) => {
      const body = message({ headers: { [name]: '<mine@example.com>' } });
      expect(() => checkContentRules(body, 'message')).not.toThrow();
    });
  });

  describe('reserved headers', () => {
    it.each([...RESERVED_HEADERS].filter((name) => !['cc', 'bcc', 'to'].includes(name)))(
      'rejects %s, whatever its case',
      (name) => {
        for (const spelling of [name, name.toUpperCase()]) {
          const body = message({ headers: { [spelling]: 'value' } });
          expect(rejection(() => checkContentRules(body, 'message'))).toMatch(
            new RegExp(`^header "${spelling}" cannot be given: `),
          );
        }
      },
    );

    it.each([
      ['from', 'use the from field'],
      ['subject', 'use the subject field'],
      ['dkim-signature', 'Envoi sets it'],
      ['to', 'each recipient gets a To header of its own'],
      ['cc', 'CC and BCC need the conversation endpoint'],
      ['bcc', 'CC and BCC need the conversation endpoint'],
    ])('explains why %s is refused on a message (rule 7)', (name, reason) => {
      const body = message({ headers: { [name]: 'x@example.com' } });
      expect(rejection(() => checkContentRules(body, 'message'))).toBe(
        `header "${name}" cannot be given: ${reason}`,
      );
    });

    it.each([
      ['Cc', { cc: [{ email: 'c@example.net' }] }, 'cc and a cc header cannot both be given'],
      ['Cc', {}, 'use the cc field'],
      ['Bcc', { bcc: [{ email: 'b@example.net' }] }, 'bcc and a bcc header cannot both be given'],
      ['Bcc', {}, 'use the bcc field'],
      ['To', {}, 'use the to field'],
    ])('explains why %s is refused on a conversation', (name, fields, reason) => {
      const body = conversation({ ...fields, headers: { [name]: 'x@example.com' } });
      expect(rejection(() => checkContentRules(body, 'conversation'))).toBe(
        `header "${name}" cannot be given: ${reason}`,
      );
    });

    it.each([
      'Authentication-Results',
      'ARC-Seal',
      'ARC-Message-Signature',
      'ARC-Authentication-Results',
      'arc-some-future-field',
      'Received-SPF',
      'Received',
      'Return-Path',
    ])('refuses the trace or authentication header %s on messages and conversations', (name) => {
      const reason = `header "${name}" cannot be given: only the mail servers that handle the message add trace and authentication headers`;
      const headers = { [name]: 'i=1; mx.example.net; dkim=pass header.d=bank.example' };
      expect(rejection(() => checkContentRules(message({ headers }), 'message'))).toBe(reason);
      expect(rejection(() => checkContentRules(conversation({ headers }), 'conversation'))).toBe(
        reason,
      );
    });

    it.each([
      'X-Campaign',
      'Archived-At',
      'X-ARC-Seal',
      'X-Authentication-Results',
      'List-Unsubscribe',
      'List-Unsubscribe-Post',
      'In-Reply-To',
      'References',
      'X-Priority',
    ])('allows %s', (name) => {
      const body = message({ headers: { [name]: 'value' } });
      expect(() => checkContentRules(body, 'message')).not.toThrow();
    });
  });

  describe('header names and counts', () => {
    it.each(['X Space', 'X:Colon', '', 'X-Ünicode', 'X\tTab', 'X\u2028'])(
      'rejects the name %j',
      (name) => {
        const body = message({ headers: { [name]: 'value' } });
        expect(rejection(() => checkContentRules(body, 'message'))).toBe(
          `header name ${JSON.stringify(name)} is invalid: use printable ASCII without spaces or colons`,
        );
      },
    );

    it('rejects a name given twice in different cases', () => {
      const body = message({ headers: { 'X-Tag': 'a', 'x-tag': 'b' } });
      expect(rejection(() => checkContentRules(body, 'message'))).toBe(
        'header "x-tag" is given more than once (header names are case-insensitive)',
      );
    });

    it('allows 100 headers and rejects 101', () => {
      const headers = (count: number) =>
        Object.fromEntries(Array.from({ length: count }, (_, i) => [`X-H${i}`, 'v']));
      expect(() => checkContentRules(message({ headers: headers(100) }), 'message')).not.toThrow();
      expect(
        rejection(() => checkContentRules(message({ headers: headers(101) }), 'message')),
      ).toBe('at most 100 headers are allowed');
    });

    it('allows U+2028 and non-ASCII in header values and the subject', () => {
      const body = message({ subject: 'Grüße\u2028😀', headers: { 'X-Note': 'a\u2028b ü' } });
      expect(() => checkContentRules(body, 'message')).not.toThrow();
    });
  });

  describe('header injection', () => {
    const breaks = [
      ['CR', '\r'],
      ['LF', '\n'],
      ['CRLF', '\r\n'],
      ['NUL', '\0'],
    ] as const;
    const evil = (b: string) => `Hi${b}Bcc: victim@example.org`;

    const messagePlaces: [string, (b: string) => Partial<CreateMessageBody>][] = [
      ['subject', (b) => ({ subject: evil(b) })],
      ['from.name', (b) => ({ from: { email: 'news@example.com', name: evil(b) } })],
      ['from.email', (b) => ({ from: { email: `news${b}@example.com` } })],
      ['reply_to.name', (b) => ({ reply_to: { email: 'r@example.com', name: evil(b) } })],
      ['reply_to.email', (b) => ({ reply_to: { email: `r${b}@example.com` } })],
      [
        'recipients[1].name',
        (b) => ({ recipients: [{ email: 'a@x.io' }, { email: 'b@x.io', name: evil(b) }] }),
      ],
      ['recipients[0].email', (b) => ({ recipients: [{ email: `a${b}@x.io` }] })],
      ['header "X-Evil"', (b) => ({ headers: { 'X-Evil': evil(b) } })],
      ['attachments[0].file_name', (b) => ({ attachments: [file({ file_name: `a${b}.txt` })] })],
      [
        'attachments[0].content_type',
        (b) => ({ attachments: [file({ content_type: `text/plain${b}X: y` })] }),
      ],
      ['attachments[0].content_id', (b) => ({ attachments: [file({ content_id: `<a${b}@b>` })] })],
      [
        'attachments[0].content_disposition',
        (b) => ({ attachments: [file({ content_disposition: `inline${b}` })] }),
      ],
    ];

    describe.each(breaks)('%s', (_name, b) => {
      it.each(messagePlaces)('is rejected in %s', (place, make) => {
        expect(rejection(() => checkContentRules(message(make(b)), 'message'))).toBe(
          `${place} must not contain CR, LF or NUL`,
        );
      });

      it('is rejected in a header name', () => {
        const body = message({ headers: { [`X-A${b}Bcc`]: 'v' } });
        expect(rejection(() => checkContentRules(body, 'message'))).toBe(
          `header name ${JSON.stringify(`X-A${b}Bcc`)} must not contain CR, LF or NUL`,
        );
      });

      it.each(['to', 'cc', 'bcc'] as const)(
        'is rejected in a conversation %s name and email',
        (list) => {
          const named = conversation({
            [list]: [{ email: 'a@x.io' }, { email: 'b@x.io', name: evil(b) }],
          });
          expect(rejection(() => checkContentRules(named, 'conversation'))).toBe(
            `${list}[1].name must not contain CR, LF or NUL`,
          );
          const addressed = conversation({ [list]: [{ email: `b${b}@x.io` }] });
          expect(rejection(() => checkContentRules(addressed, 'conversation'))).toBe(
            `${list}[0].email must not contain CR, LF or NUL`,
          );
        },
      );
    });

    it('never echoes a raw line break in its message', () => {
      const body = message({ headers: { 'X-A\r\nBcc': 'v' } });
      expect(rejection(() => checkContentRules(body, 'message'))).not.toMatch(/[\r\n]/);
    });

    describe('encoded words', () => {
      it.each([
        ['B', encodedWord('Hi\r\nBcc: victim@example.org', 'B')],
        ['Q', encodedWord('Hi\r\nBcc: victim@example.org', 'Q')],
        ['Q with underscores', '=?UTF-8?q?Hi=0D=0ABcc:_victim@example.org?='],
        ['a NUL', encodedWord('a\0b')],
        ['latin1', '=?iso-8859-1?Q?x=0Ay?='],
        ['an unknown charset', '=?x-unknown?Q?x=0Ay?='],
        ['a break split across two words', `${encodedWord('a\r')} ${encodedWord('\nBcc: x@y')}`],
      ])('rejects %s decoding to a line break', (_case, word) => {
        const places: [string, Partial<CreateMessageBody>][] = [
          ['subject', { subject: `Hello ${word}` }],
          ['from.name', { from: { email: 'n@example.com', name: word } }],
          ['header "X-Evil"', { headers: { 'X-Evil': word } }],
          ['attachments[0].file_name', { attachments: [file({ file_name: word })] }],
        ];
        for (const [place, fields] of places) {
          expect(rejection(() => checkContentRules(message(fields), 'message'))).toBe(
            `${place} contains an encoded word that decodes to CR, LF or NUL`,
          );
        }
      });

      it('accepts harmless encoded words', () => {
        const body = message({
          subject: `${encodedWord('Café')} ${encodedWord('😀', 'Q')}`,
          headers: { 'X-Note': '=?utf-8?Q?Gr=C3=BC=C3=9Fe?=' },
        });
        expect(() => checkContentRules(body, 'message')).not.toThrow();
      });
    });
  });

  describe('attachments', () => {
    const accepts = (attachment: AttachmentBody) =>
      expect(() =>
        checkContentRules(message({ attachments: [file(), attachment] }), 'message'),
      ).not.toThrow();
    const rejects = (attachment: AttachmentBody, expected: string) =>
      expect(
        rejection(() =>
          checkContentRules(message({ attachments: [file(), attachment] }), 'message'),
        ),
      ).toBe(expected);

    it.each([
      ['padded', 'aGVsbG8gd29ybGQ='],
      ['unpadded', 'aGVsbG8gd29ybGQ'],
      ['wrapped with CRLF and spaces', 'aGVs\r\nbG8g d29y\nbGQ='],
      ['empty', ''],
    ])('accepts %s base64', (_case, data) => accepts(file({ data, base64: true })));

    it.each([
      ['bad characters', 'aGVsbG8@#$'],
      ['url-safe alphabet', 'aGV-bG8_'],
      ['an impossible length', 'aGVsb'],
      ['misplaced padding', 'aG=sbG8='],
      ['too much padding', 'aGVsbA==='],
      ['padding on a short group', 'aGVsbG8='.slice(0, 7) + '=='],
    ])('rejects base64 with %s', (_case, data) =>
      rejects(file({ data, base64: true }), 'attachments[1].data is not valid base64'),
    );

    it('does not check text data', () => accepts(file({ data: '@@@ not base64 \0' })));

    it.each(['<logo@example.com>', '<logo>', 'logo@example.com', 'logo'])(
      'accepts the content_id %s',
      (content_id) => accepts(file({ content_id })),
    );

    it.each(['<>', '<a b@c>', '<a<b>@c>'])('rejects the inline content_id %s', (content_id) =>
      rejects(
        file({ content_id }),
        'attachments[1].content_id of an inline attachment must have the form <name@host>',
      ),
    );

    it.each(['inline', 'attachment', 'INLINE'])('accepts content_disposition %s', (value) =>
      accepts(file({ content_disposition: value })),
    );

    it('rejects another content_disposition', () =>
      rejects(
        file({ content_disposition: 'form-data' }),
        'attachments[1].content_disposition must be inline or attachment',
      ));

    it.each(['application/pdf', 'text/plain; charset=utf-8', 'image/svg+xml', 'message/rfc822'])(
      'accepts the content_type %s',
      (content_type) => accepts(file({ content_type })),
    );

    it.each(['pdf', 'text/', 'a b/c'])('rejects the content_type %s', (content_type) =>
      rejects(
        file({ content_type }),
        'attachments[1].content_type must be a MIME type such as application/pdf',
      ),
    );

    describe('message/* (sent unencoded, RFC 2046 5.2.1)', () => {
      const eml = (body: string) => `Subject: forwarded\r\n\r\n${body}\r\n`;
      const tooLong =
        'attachments[1] has a line longer than 998 octets, which a message/* attachment cannot carry (it is sent unencoded); send it as application/octet-stream instead';

      it.each([
        ['998-octet lines', eml('m'.repeat(998))],
        ['998 octets of UTF-8', eml('é'.repeat(499))],
        ['long text split by a lone CR', eml(`${'m'.repeat(998)}\r${'m'.repeat(998)}`)],
      ])('accepts %s', (_case, data) => accepts(file({ data, content_type: 'message/rfc822' })));

      it.each([
        ['as text', file({ data: eml('m'.repeat(999)), content_type: 'message/rfc822' })],
        ['as UTF-8', file({ data: eml('é'.repeat(500)), content_type: 'message/rfc822' })],
        [
          'as base64',
          file({
            data: Buffer.from(eml('m'.repeat(2_000))).toString('base64'),
            base64: true,
            content_type: 'MESSAGE/global',
          }),
        ],
      ])('rejects a line over 998 octets %s', (_case, attachment) => rejects(attachment, tooLong));

      it('accepts the same line in an attachment that gets encoded', () =>
        accepts(file({ data: eml('m'.repeat(2_000)), content_type: 'application/octet-stream' })));
    });

    it('rejects a multipart content_type', () =>
      rejects(
        file({ content_type: 'multipart/mixed; boundary=x' }),
        'attachments[1].content_type cannot be multipart',
      ));
  });
});

describe('customHeaders', () => {
  it('drops message-id in any case and keeps the others with their case', () => {
    const body = message({
      headers: {
        'Message-ID': '<x@y>',
        'x-CUSTOM-header': 'A',
        'List-Unsubscribe': '<mailto:u@x>',
      },
    });
    expect(customHeaders(body)).toEqual({
      'x-CUSTOM-header': 'A',
      'List-Unsubscribe': '<mailto:u@x>',
    });
    expect(customHeaders(message({ headers: { 'MESSAGE-ID': 'a', 'message-id': 'b' } }))).toEqual(
      {},
    );
  });

  it('returns {} without headers', () => {
    expect(customHeaders(message())).toEqual({});
  });
});
