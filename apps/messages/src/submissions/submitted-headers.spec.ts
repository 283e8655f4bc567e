import { simpleParser } from 'mailparser';

import { readHeaderBlock } from './header-block';
import { parseSubmittedHeaders } from './submitted-headers';

/** A message of these header lines (CRLF) and a short body. */
function message(...headers: string[]): Buffer {
  return Buffer.from([...headers, '', 'body', ''].join('\r\n'), 'utf8');
}

function parsed(raw: Buffer) {
  const block = readHeaderBlock(raw);
  if (!block) throw new Error('no header block');
  return parseSubmittedHeaders(raw, block);
}

/** What mailparser reads of the same header block: the first From address and the Subject. */
async function byMailparser(raw: Buffer): Promise<{ from?: string; subject: string }> {
  const mail = await simpleParser(raw, { skipHtmlToText: true, skipTextToHtml: true });
  const from = mail.from?.value.find((entry) => entry.address)?.address;
  return { ...(from !== undefined ? { from } : {}), subject: mail.subject ?? '' };
}

describe('parseSubmittedHeaders', () => {
  it.each([
    ['a display name', message('From: "App, Inc." <App@Example.COM>', 'Subject: Hello')],
    ['a bare address', message('From: app@example.com', 'Subject: Hello')],
    [
      'an encoded subject',
      message('From: <a@example.com>', 'Subject: =?UTF-8?B?w6l0w6k=?= report'),
    ],
    [
      'adjacent encoded words over folded lines',
      message(
        'From: =?utf-8?q?J=C3=BCrgen?= <j@example.com>',
        'Subject: =?UTF-8?Q?Gr=C3=BC=C3=9Fe?=',
        ' =?UTF-8?Q?_aus_K=C3=B6ln?= und mehr',
      ),
    ],
    ['a folded subject', message('From: a@example.com', 'Subject: one', '\ttwo', '   three')],
    ['an 8-bit UTF-8 subject', message('From: a@example.com', 'Subject: Grüße ✓')],
    ['a group before the address', message('From: team: ;, Real <real@example.com>')],
    ['a comment', message('From: a@example.com (the app)', 'Subject: x')],
    ['no subject', message('From: a@example.com')],
    [
      'a latin-1 charset',
      message('From: a@example.com', 'Subject: =?ISO-8859-1?Q?caf=E9?= =?ISO-8859-1?Q?!?='),
    ],
  ])('reads what mailparser reads: %s', async (_case, raw) => {
    const expected = await byMailparser(raw);
    const headers = parsed(raw);
    expect(headers?.from).toBe(expected.from);
    expect(headers?.subject).toBe(expected.subject);
  });

  it('normalises the From domain', () => {
    expect(parsed(message('From: App <app@Example.COM.>'))).toMatchObject({
      fromDomain: 'example.com',
    });
  });

  it.each([
    ['no From', message('To: a@example.com', 'Subject: x')],
    ['a From without an address', message('From: undisclosed', 'Subject: x')],
    ['an address without a domain', message('From: app@', 'Subject: x')],
  ])('reads nothing from %s', (_case, raw) => {
    expect(parsed(raw)).toBeUndefined();
  });
});
