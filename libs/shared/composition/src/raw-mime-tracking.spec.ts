import { simpleParser } from 'mailparser';

import { HtmlTracker } from './html-tracker';
import { trackRawMime } from './raw-mime-tracking';
import { decodeQuotedPrintable, encodeQuotedPrintable } from './transfer-encoding';

const tracker = new HtmlTracker({
  TRACKING_BASE_URL: 'https://track.example',
  TRACKING_SECRET: 'raw-mime-tracking-secret-of-at-least-32-bytes',
});
const both = { opens: true, clicks: true };
const MESSAGE_ID = '0190a6f4-0000-7000-8000-000000000001';

const HTML = '<html><body><p>Hi</p><a href="https://example.com/a">A</a></body></html>';
const TEXT = 'Hi, see https://example.com/a';

/** The message with CRLF line breaks (written with LF here). */
function crlf(message: string): Buffer {
  return Buffer.from(message.replace(/\n/g, '\r\n'), 'utf8');
}

function track(raw: Buffer, choice = both) {
  return trackRawMime(raw, tracker, MESSAGE_ID, choice);
}

/** What the same HTML gets from the API path's tracker. */
function expectedHtml(html: string, firstLink = 0): string {
  return tracker.track(html, MESSAGE_ID, both, firstLink).html;
}

const alternative = (
  html: string,
  htmlHeaders = 'Content-Type: text/html; charset=utf-8',
) => `From: a@example.com
To: b@example.org
Subject: Hello
MIME-Version: 1.0
Content-Type: multipart/alternative; boundary="alt"

--alt
Content-Type: text/plain; charset=utf-8

${TEXT}
--alt
${htmlHeaders}

${html}
--alt--
`;

describe('trackRawMime', () => {
  it('tracks the HTML part of multipart/alternative and keeps every other byte', () => {
    const raw = crlf(alternative(HTML));
    const result = track(raw);

    expect(result.raw.toString('utf8')).toBe(
      crlf(alternative(expectedHtml(HTML))).toString('utf8'),
    );
    expect(result.links).toEqual([{ index: 0, url: 'https://example.com/a' }]);
    expect(result.skipped).toEqual([]);
  });

  it('returns the very same buffer when tracking is off', () => {
    const raw = crlf(alternative(HTML));
    expect(track(raw, { opens: false, clicks: false }).raw).toBe(raw);
  });

  it('adds only the pixel for opens and only rewrites links for clicks', () => {
    const raw = crlf(alternative(HTML));
    const opens = track(raw, { opens: true, clicks: false });
    const clicks = track(raw, { opens: false, clicks: true });

    expect(opens.raw.toString()).toContain('/t/o/');
    expect(opens.raw.toString()).not.toContain('/t/c/');
    expect(opens.links).toEqual([]);
    expect(clicks.raw.toString()).toContain('/t/c/');
    expect(clicks.raw.toString()).not.toContain('/t/o/');
  });

  it('works the same with LF line breaks', () => {
    const raw = Buffer.from(alternative(HTML));
    expect(track(raw).raw.toString()).toBe(alternative(expectedHtml(HTML)));
  });

  it('leaves text parts, attachments (an HTML file included) and attached messages alone', async () => {
    const attachedMessage = crlf(alternative('<a href="https://inner.example/">in</a>'));
    const message = crlf(`From: a@example.com
To: b@example.org
Subject: Files
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="mixed"

--mixed
Content-Type: multipart/related; boundary="rel"

--rel
Content-Type: multipart/alternative; boundary="alt"

--alt
Content-Type: text/plain

${TEXT}
--alt
Content-Type: text/html; charset="UTF-8"
Content-Transfer-Encoding: quoted-printable

<p style=3D"x">Hi</p><a href=3D"https://example.com/a">A</a>
--alt--
--rel
Content-Type: image/png
Content-Transfer-Encoding: base64
Content-ID: <logo>

iVBORw0KGgo=
--rel--
--mixed
Content-Type: text/html; name="page.html"
Content-Disposition: attachment; filename="page.html"

<a href="https://attached.example/">file</a>
--mixed
Content-Type: message/rfc822

${attachedMessage.toString()}
--mixed--
`);
    const result = track(message);
    const text = result.raw.toString();

    expect(result.links).toEqual([{ index: 0, url: 'https://example.com/a' }]);
    expect(text).toContain('<a href="https://attached.example/">file</a>');
    expect(text).toContain('<a href="https://inner.example/">in</a>');
    expect(text).toContain(`\r\n${TEXT}\r\n--alt\r\n`);
    expect(text.slice(0, text.indexOf('<p style'))).toBe(
      message.toString().slice(0, message.indexOf('<p style')),
    );
    expect(text.slice(text.indexOf('--alt--'))).toBe(
      message.toString().slice(message.indexOf('--alt--')),
    );

    const parsed = await simpleParser(result.raw);
    expect(parsed.html).toContain('href="https://track.example/t/c/');
    expect(parsed.html).toContain('/t/o/');
  });

  it('decodes and re-encodes quoted-printable with soft breaks', async () => {
    const longHtml = `<html><body><p>${'café '.repeat(40)}</p><a href="https://example.com/long?q=1">L</a></body></html>`;
    const encoded = encodeQuotedPrintable(Buffer.from(longHtml, 'utf8'), '\r\n');
    expect(encoded).toContain('=\r\n');
    const raw = crlf(
      alternative(
        encoded.replace(/\r\n/g, '\n'),
        'Content-Type: text/html; charset=utf-8\nContent-Transfer-Encoding: quoted-printable',
      ),
    );

    const result = track(raw);

    const parsed = await simpleParser(result.raw);
    expect(parsed.html).toBe(expectedHtml(longHtml));
    expect(result.links).toEqual([{ index: 0, url: 'https://example.com/long?q=1' }]);
    for (const line of result.raw.toString().split('\r\n'))
      expect(line.length).toBeLessThanOrEqual(76 + 2);
  });

  it('decodes and re-encodes base64 in 76-character lines', async () => {
    const html = `<html><body>${'<p>Grüße</p>'.repeat(20)}<a href="https://example.com/b">B</a></body></html>`;
    const body = Buffer.from(html).toString('base64').replace(/.{76}/g, '$&\n');
    const raw = crlf(
      alternative(
        body.trimEnd(),
        'Content-Type: text/html; charset=utf-8\nContent-Transfer-Encoding: base64',
      ),
    );

    const result = track(raw);

    const parsed = await simpleParser(result.raw);
    expect(parsed.html).toBe(expectedHtml(html));
    const lines = result.raw.toString().split('\r\n');
    const base64Lines = lines.slice(
      lines.indexOf('Content-Transfer-Encoding: base64') + 2,
      lines.lastIndexOf('--alt--'),
    );
    expect(base64Lines.slice(0, -1).every((line) => line.length === 76)).toBe(true);
  });

  it('tracks a single-part HTML message, and a part without charset', () => {
    const raw = crlf(`From: a@example.com
Subject: Single
Content-Type: text/html

${HTML}
`);
    const result = track(raw);

    expect(result.raw.toString()).toBe(
      crlf(`From: a@example.com
Subject: Single
Content-Type: text/html

${expectedHtml(HTML)}
`).toString(),
    );
  });

  it('switches a 7bit part to quoted-printable when a line would pass 998 octets', async () => {
    const html = `<html><body><p>${'x'.repeat(960)}</p></body></html>`;
    const raw = crlf(
      alternative(
        html,
        'Content-Type: text/html; charset=us-ascii\nContent-Transfer-Encoding: 7bit',
      ),
    );

    const result = track(raw);
    const text = result.raw.toString();

    expect(text).toContain('Content-Transfer-Encoding: quoted-printable\r\n');
    expect(text).not.toContain('7bit');
    expect(text.split('\r\n').every((line) => line.length <= 998)).toBe(true);
    expect((await simpleParser(result.raw)).html).toBe(expectedHtml(html));
  });

  it('numbers links on across several HTML parts', () => {
    const raw = crlf(`Content-Type: multipart/mixed; boundary=b

--b
Content-Type: text/html

<a href="https://one.example/">1</a>
--b
Content-Type: text/html

<a href="https://two.example/">2</a>
--b--
`);
    const result = track(raw);
    expect(result.links).toEqual([
      { index: 0, url: 'https://one.example/' },
      { index: 1, url: 'https://two.example/' },
    ]);
    expect(result.raw.toString()).toContain(
      expectedHtml('<a href="https://two.example/">2</a>', 1),
    );
  });

  it('leaves a part in another charset alone and says why', () => {
    const raw = crlf(alternative(HTML, 'Content-Type: text/html; charset=iso-2022-jp'));
    const result = track(raw);
    expect(result.raw).toBe(raw);
    expect(result.skipped).toEqual(['an HTML part in charset iso-2022-jp']);
  });

  it('leaves a utf-8 part that is not valid UTF-8 alone', () => {
    const raw = crlf(alternative(HTML));
    const bad = Buffer.from(raw.toString('latin1').replace('<p>Hi', '<p>\xffHi'), 'latin1');
    const result = track(bad);
    expect(result.raw).toBe(bad);
    expect(result.skipped).toEqual(['an HTML part in charset utf-8']);
  });

  it.each([
    [
      'a multipart without a close delimiter',
      'Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/html\n\n<a href="https://e.example/">e</a>\n',
    ],
    [
      'a multipart without a boundary',
      'Content-Type: multipart/mixed\n\n--b\nContent-Type: text/html\n\n<a href="https://e.example/">e</a>\n--b--\n',
    ],
    ['a header block without an end', 'Content-Type: text/html'],
  ])('leaves malformed MIME untouched: %s', (_name, message) => {
    const raw = crlf(message);
    const result = track(raw);
    expect(result.raw).toBe(raw);
    expect(result.links).toEqual([]);
  });

  it('tracks a 20 MB message with little more memory than the message itself', () => {
    const attachment = Buffer.alloc(15 * 1024 * 1024, 7)
      .toString('base64')
      .replace(/.{76}/g, '$&\r\n');
    const raw = crlf(`Content-Type: multipart/mixed; boundary=b

--b
Content-Type: text/html; charset=utf-8

${HTML}
--b
Content-Type: application/octet-stream
Content-Transfer-Encoding: base64

ATTACHMENT
--b--
`);
    const big = Buffer.concat([
      raw.subarray(0, raw.indexOf('ATTACHMENT')),
      Buffer.from(attachment),
      raw.subarray(raw.indexOf('ATTACHMENT') + 'ATTACHMENT'.length),
    ]);
    expect(big.length).toBeGreaterThan(20 * 1024 * 1024);
    const before = process.memoryUsage();

    const result = track(big);

    const after = process.memoryUsage();
    const grown = after.arrayBuffers - before.arrayBuffers + (after.heapUsed - before.heapUsed);
    expect(grown).toBeLessThan(3 * big.length);
    expect(result.links).toHaveLength(1);
    expect(
      result.raw.subarray(result.raw.length - 200).equals(big.subarray(big.length - 200)),
    ).toBe(true);
  });
});

describe('quoted-printable', () => {
  it('round-trips bytes with soft breaks, escapes and trailing whitespace', () => {
    const bytes = Buffer.from(`a=b \t\r\n${'é'.repeat(60)}\r\nend `, 'utf8');
    const encoded = encodeQuotedPrintable(bytes, '\r\n');
    expect(encoded.split('\r\n').every((line) => line.length <= 76)).toBe(true);
    expect(encoded.startsWith('a=3Db =09\r\n')).toBe(true);
    expect(encoded.endsWith('end=20')).toBe(true);
    expect(decodeQuotedPrintable(Buffer.from(encoded)).equals(bytes)).toBe(true);
  });

  it('decodes soft breaks with LF and keeps a stray equals sign', () => {
    expect(decodeQuotedPrintable(Buffer.from('ab=\ncd=  \r\ne=ZZ=')).toString()).toBe('abcde=ZZ');
  });
});
