import { readHeaderBlock } from './header-block';
import { messageIdDomain, rfc5322Date, submittedRaw } from './submitted-raw';

function stored(text: string, added: Parameters<typeof submittedRaw>[2]): string {
  const raw = Buffer.from(text, 'latin1');
  const block = readHeaderBlock(raw);
  if (!block) throw new Error('no header block');
  return submittedRaw(raw, block, added).toString('latin1');
}

describe('submittedRaw', () => {
  it('strips every control header, folded lines included, and keeps every other byte', () => {
    const text = [
      'From: a@x.test',
      'AhaSend-Tags: a,',
      '\tb',
      'Subject: keep',
      'ahasend-sandbox: true',
      'X-Other: ahasend-tags: not a header',
      '',
      'ahasend-tags: body line stays',
      '',
    ].join('\r\n');
    expect(stored(text, {})).toBe(
      [
        'From: a@x.test',
        'Subject: keep',
        'X-Other: ahasend-tags: not a header',
        '',
        'ahasend-tags: body line stays',
        '',
      ].join('\r\n'),
    );
  });

  it('leaves a message without control headers byte for byte', () => {
    const text = 'From: a@x.test\nSubject: \xe9t\xe9\n\n\xff\x00 body\n.\n';
    expect(stored(text, {})).toBe(text);
  });

  it('replaces the Message-ID and adds a Date at the top, in the message own line ending', () => {
    const text = 'From: a@x.test\nMessage-ID: <1@elsewhere.test>\nmessage-id: <2@x>\n\nbody';
    expect(
      stored(text, {
        messageIdHeader: '<u@x.test>',
        date: new Date(Date.UTC(2026, 10, 25, 10, 0, 0)),
      }),
    ).toBe('Message-ID: <u@x.test>\nDate: Wed, 25 Nov 2026 10:00:00 +0000\nFrom: a@x.test\n\nbody');
  });
});

describe('messageIdDomain and rfc5322Date', () => {
  it('reads the domain of a well-formed Message-ID only', () => {
    expect(messageIdDomain(' <abc.1@Mail.X.test> ')).toBe('mail.x.test');
    expect(messageIdDomain('abc@x.test')).toBeUndefined();
    expect(messageIdDomain('<abc>')).toBeUndefined();
    expect(messageIdDomain('<a@b@c>')).toBeUndefined();
  });

  it('writes a numeric zone', () => {
    expect(rfc5322Date(new Date(Date.UTC(2026, 0, 2, 3, 4, 5)))).toBe(
      'Fri, 02 Jan 2026 03:04:05 +0000',
    );
  });
});
