import { appendOpenPixel, rewriteLinks } from './html-tracking';

const click = (index: number): string => `https://t.example/c/${index}`;

/** The URLs rewriteLinks tracks in `html`. */
function trackedUrls(html: string): string[] {
  return rewriteLinks(html, click).links.map((link) => link.url);
}

/** Asserts `html` comes back byte-identical with nothing tracked. */
function expectUntouched(html: string): void {
  const result = rewriteLinks(html, click);
  expect(result.links).toEqual([]);
  expect(result.html).toBe(html);
}

describe('rewriteLinks', () => {
  describe('rewrites', () => {
    it('replaces only the href values of http(s) links and keeps every other byte', () => {
      const html =
        '<!DOCTYPE html>\r\n<html><body>\r\n' +
        '<p>Hi <b>there</b> — café ✉️</p>\r\n' +
        '<a class="btn" href="https://example.com/a?x=1" target="_blank">A</a>\r\n' +
        "<a href='http://example.com/b'>B</a>\r\n" +
        '</body></html>';

      const result = rewriteLinks(html, click);

      expect(result.html).toBe(
        '<!DOCTYPE html>\r\n<html><body>\r\n' +
          '<p>Hi <b>there</b> — café ✉️</p>\r\n' +
          '<a class="btn" href="https://t.example/c/0" target="_blank">A</a>\r\n' +
          "<a href='https://t.example/c/1'>B</a>\r\n" +
          '</body></html>',
      );
      expect(result.links).toEqual([
        { index: 0, url: 'https://example.com/a?x=1' },
        { index: 1, url: 'http://example.com/b' },
      ]);
    });

    it('matches tag names, attribute names and schemes case-insensitively', () => {
      const html = '<A HREF="HTTPS://Example.com/Up">x</A><a hReF="Http://example.com/mixed">y</a>';

      const result = rewriteLinks(html, click);

      expect(result.html).toBe(
        '<A HREF="https://t.example/c/0">x</A><a hReF="https://t.example/c/1">y</a>',
      );
      expect(result.links.map((link) => link.url)).toEqual([
        'HTTPS://Example.com/Up',
        'Http://example.com/mixed',
      ]);
    });

    it('accepts any whitespace between attributes, a self-closing slash and other attributes', () => {
      const html =
        '<a\n\thref="https://example.com/1"\r\nstyle="color:red">1</a>' +
        '<a title="t" href="https://example.com/2" />' +
        '<a data-x="1" rel=noopener href="https://example.com/3" disabled>3</a>';

      expect(trackedUrls(html)).toEqual([
        'https://example.com/1',
        'https://example.com/2',
        'https://example.com/3',
      ]);
    });

    it('numbers tracked links in document order; skipped links take no index', () => {
      const indexes: number[] = [];
      const html =
        '<a href="https://example.com/1">1</a><a href="mailto:x@example.com">m</a>' +
        '<a href="https://example.com/1">again</a><a href="#top">t</a>' +
        '<a href="http://example.com/3">3</a>';

      const result = rewriteLinks(html, (index) => {
        indexes.push(index);
        return click(index);
      });

      expect(indexes).toEqual([0, 1, 2]);
      expect(result.links).toEqual([
        { index: 0, url: 'https://example.com/1' },
        { index: 1, url: 'https://example.com/1' },
        { index: 2, url: 'http://example.com/3' },
      ]);
      expect(result.html).toBe(
        '<a href="https://t.example/c/0">1</a><a href="mailto:x@example.com">m</a>' +
          '<a href="https://t.example/c/1">again</a><a href="#top">t</a>' +
          '<a href="https://t.example/c/2">3</a>',
      );
    });

    it('keeps links whose value holds the other quote character', () => {
      const html = `<a href='https://example.com/?q="x"'>q</a>`;

      const result = rewriteLinks(html, click);

      expect(result.links).toEqual([{ index: 0, url: 'https://example.com/?q="x"' }]);
      expect(result.html).toBe(`<a href='https://t.example/c/0'>q</a>`);
    });

    it('tracks links in elements after a raw-text element ends', () => {
      const html =
        '<style>a{color:red}</STYLE ><a href="https://example.com/after">x</a>' +
        '<title>t</title><a href="https://example.com/title">y</a>';

      expect(trackedUrls(html)).toEqual(['https://example.com/after', 'https://example.com/title']);
    });

    it('tracks links after comments of every closing form', () => {
      const html =
        '<!-- a --><a href="https://example.com/1">1</a>' +
        '<!-- b --!><a href="https://example.com/2">2</a>' +
        '<!--><a href="https://example.com/3">3</a>' +
        '<!---><a href="https://example.com/4">4</a>' +
        '<!----><a href="https://example.com/5">5</a>';

      expect(trackedUrls(html)).toEqual([1, 2, 3, 4, 5].map((n) => `https://example.com/${n}`));
    });

    it('tracks the link revealed by a downlevel-revealed conditional comment', () => {
      const html =
        '<!--[if mso]><a href="https://example.com/outlook">o</a><![endif]-->' +
        '<!--[if !mso]><!--><a href="https://example.com/others">x</a><!--<![endif]-->';

      expect(trackedUrls(html)).toEqual(['https://example.com/others']);
    });
  });

  describe('escapes the inserted URL', () => {
    it('for double quotes', () => {
      const result = rewriteLinks(
        '<a href="https://example.com/">x</a>',
        () => `https://t.example/c?a=1&b="2"&c='3'`,
      );

      expect(result.html).toBe(
        '<a href="https://t.example/c?a=1&amp;b=&quot;2&quot;&amp;c=&#39;3&#39;">x</a>',
      );
    });

    it('for single quotes', () => {
      const result = rewriteLinks("<a href='https://example.com/'>x</a>", () => "https://t/'&");

      expect(result.html).toBe("<a href='https://t/&#39;&amp;'>x</a>");
    });
  });

  describe('skips links that are not http(s)', () => {
    it.each([
      ['mailto', 'mailto:someone@example.com'],
      ['tel', 'tel:+15551234'],
      ['javascript', 'javascript:alert(1)'],
      ['javascript, mixed case', 'JaVaScRiPt:alert(1)'],
      ['data', 'data:text/html,<b>x</b>'],
      ['ftp', 'ftp://example.com/file'],
      ['anchor', '#top'],
      ['relative path', '/account/settings'],
      ['relative file', 'page.html'],
      ['protocol-relative', '//example.com/x'],
      ['empty', ''],
      ['leading whitespace', ' https://example.com/'],
      ['scheme without slashes', 'https:example.com'],
      ['lookalike scheme', 'httpx://example.com'],
      ['entity-hidden javascript', '&#106;avascript:alert(1)'],
    ])('%s', (_label, href) => {
      expectUntouched(`<p><a href="${href}">x</a></p>`);
    });

    it.each([
      ['empty host', 'http://'],
      ['empty host with path', 'https:///'],
      ['space in host', 'https://exa mple.com/'],
      ['bad port', 'https://example.com:99999/'],
      ['unclosed IPv6', 'http://[::1/'],
      ['forbidden host character', 'https://exa<mple.com/'],
    ])('that new URL rejects: %s', (_label, href) => {
      expectUntouched(`<a href="${href}">x</a>`);
    });

    it.each([
      ['line feed', 'https://example.com/\na'],
      ['carriage return', 'https://example.com/\r\nLocation: https://evil.example/'],
      ['tab', 'https://example.com/\ta'],
      ['NUL', 'https://example.com/\u0000'],
      ['DEL', 'https://example.com/\u007f'],
    ])('with a control character: %s', (_label, href) => {
      expectUntouched(`<a href="${href}">x</a>`);
    });
  });

  describe('skips hrefs that are not quoted or have whitespace around =', () => {
    it.each([
      ['unquoted', '<a href=https://example.com/>x</a>'],
      ['space before =', '<a href ="https://example.com/">x</a>'],
      ['space after =', '<a href= "https://example.com/">x</a>'],
      ['spaces around =', '<a href = "https://example.com/">x</a>'],
      ['newline before =', '<a href\n="https://example.com/">x</a>'],
      ['tab after =', "<a href=\t'https://example.com/'>x</a>"],
      ['no value', '<a href>x</a>'],
    ])('%s', (_label, html) => {
      expectUntouched(html);
    });
  });

  describe('skips template variables', () => {
    it.each(['{{ url }}', '{{url}}', '{{{url}}}', ' {{ link.href }} '])('%s', (href) => {
      expectUntouched(`<a href="${href}">x</a>`);
    });
  });

  describe('skips links marked data-as-no-track', () => {
    it.each([
      ['without a value', '<a href="https://example.com/" data-as-no-track>x</a>'],
      ['with an empty value', '<a href="https://example.com/" data-as-no-track="">x</a>'],
      ['with a value', '<a data-as-no-track="true" href="https://example.com/">x</a>'],
      ['with "false"', '<a href="https://example.com/" data-as-no-track="false">x</a>'],
      ['unquoted', '<a data-as-no-track=1 href="https://example.com/">x</a>'],
      ['in upper case', '<a href="https://example.com/" DATA-AS-NO-TRACK>x</a>'],
      ['before the closing slash', '<a href="https://example.com/" data-as-no-track/>x</a>'],
    ])('%s', (_label, html) => {
      expectUntouched(html);
    });

    it('only on the link that carries it', () => {
      const html =
        '<a href="https://example.com/no" data-as-no-track>n</a>' +
        '<a href="https://example.com/yes" data-as-no-track-x="1">y</a>';

      expect(trackedUrls(html)).toEqual(['https://example.com/yes']);
    });
  });

  describe('skips anything that is not an <a> start tag', () => {
    it.each([
      ['area', '<area href="https://example.com/" />'],
      ['link', '<link rel="stylesheet" href="https://example.com/s.css">'],
      ['base', '<base href="https://example.com/">'],
      ['abbr', '<abbr href="https://example.com/">x</abbr>'],
      ['a-prefixed custom element', '<a-link href="https://example.com/">x</a-link>'],
      ['img src', '<img src="https://example.com/i.png">'],
      ['end tag', '</a href="https://example.com/">'],
      ['an a tag inside an attribute value', `<img alt='<a href="https://example.com/">'>`],
      ['text', 'a href="https://example.com/" and &lt;a href="https://example.com/"&gt;'],
    ])('%s', (_label, html) => {
      expectUntouched(html);
    });
  });

  describe('skips links in comments, declarations and raw text', () => {
    it.each([
      ['a comment', '<!-- <a href="https://example.com/">x</a> -->'],
      ['a multi-line comment', '<!--\n<p>\n<a href="https://example.com/">x</a>\n-->'],
      [
        'an mso conditional comment',
        '<!--[if mso]><a href="https://example.com/">x</a><![endif]-->',
      ],
      ['an unterminated comment', '<p>x</p><!-- <a href="https://example.com/">x</a>'],
      ['a comment with -- inside', '<!-- a -- <a href="https://example.com/">x</a> -- b -->'],
      ['a bogus comment', '<!x <a href="https://example.com/">>'],
      ['a processing instruction', '<?x <a href="https://example.com/">?>'],
      ['an end-tag bogus comment', '</ <a href="https://example.com/">'],
      ['CDATA', '<svg><![CDATA[ > <a href="https://example.com/">x</a> ]]></svg>'],
      ['style', '<style>/* <a href="https://example.com/"> */</style>'],
      ['script', '<script>document.write(\'<a href="https://example.com/">\')</script>'],
      ['textarea', '<textarea><a href="https://example.com/">x</a></textarea>'],
      ['title', '<title><a href="https://example.com/">x</a></title>'],
      ['noscript', '<noscript><a href="https://example.com/">x</a></noscript>'],
      ['an unclosed style', '<style><a href="https://example.com/">x</a>'],
      ['plaintext', '<plaintext></plaintext><a href="https://example.com/">x</a>'],
    ])('%s', (_label, html) => {
      expectUntouched(html);
    });

    it('ends raw text only at its own end tag', () => {
      const html =
        '<style></styles><a href="https://example.com/in">x</a></style>' +
        '<a href="https://example.com/out">y</a>';

      expect(trackedUrls(html)).toEqual(['https://example.com/out']);
    });
  });

  describe('skips malformed tags', () => {
    it.each([
      ['end of input inside the tag', '<a href="https://example.com/"'],
      ['unterminated quote', '<a href="https://example.com/>x</a>'],
      ['no whitespace after the value', '<a href="https://example.com/"class="x">x</a>'],
      ['a quote in an attribute name', '<a x"y href="https://example.com/">x</a>'],
      ['a < in the tag', '<a href="https://example.com/" <b>x</b>'],
      ['a name starting with =', '<a =x href="https://example.com/">x</a>'],
      ['a stray slash', '<a/href="https://example.com/">x</a>'],
      ['a quote in an unquoted value', '<a class=a"b href="https://example.com/">x</a>'],
      ['a missing value', '<a class=>x</a><a href="https://example.com/" class=>x</a>'],
      ['a duplicate href', '<a href="https://example.com/1" href="https://example.com/2">x</a>'],
      [
        'a duplicate href in another case',
        '<a href="https://example.com/1" HREF="javascript:alert(1)">x</a>',
      ],
    ])('%s', (_label, html) => {
      expectUntouched(html);
    });

    it('and carries on with the next tag', () => {
      const html =
        '<a href="https://example.com/bad"class="x">x</a><a href="https://example.com/ok">y</a>';

      expect(trackedUrls(html)).toEqual(['https://example.com/ok']);
    });
  });

  describe('decodes character references in the href', () => {
    it.each([
      ['&amp;', 'https://example.com/?a=1&amp;b=2', 'https://example.com/?a=1&b=2'],
      ['&AMP;', 'https://example.com/?a=1&AMP;b=2', 'https://example.com/?a=1&b=2'],
      [
        'legacy &amp without ;',
        'https://example.com/?a=1&amp&b=2',
        'https://example.com/?a=1&&b=2',
      ],
      ['decimal', 'https://example.com/?a=1&#38;b=2', 'https://example.com/?a=1&b=2'],
      ['hex', 'https://example.com/?a=1&#x26;b=2', 'https://example.com/?a=1&b=2'],
      ['hex, upper case', 'https://example.com/?a=1&#X26;b=2', 'https://example.com/?a=1&b=2'],
      ['decimal without ;', 'https://example.com/?a=1&#38b=2', 'https://example.com/?a=1&b=2'],
      ['hex digits run on without ;', 'https://example.com/&#x26b', 'https://example.com/ɫ'],
      ['decimal with leading zeros', 'https://example.com/&#0000065;', 'https://example.com/A'],
      ['&quot; and &apos;', 'https://example.com/?q=&quot;&apos;', `https://example.com/?q="'`],
      ['&lt; and &gt;', 'https://example.com/?q=&lt;b&gt;', 'https://example.com/?q=<b>'],
      ['astral code point', 'https://example.com/&#x1F600;', 'https://example.com/😀'],
      ['scheme', 'https&#58;//example.com/', 'https://example.com/'],
      ['bare &', 'https://example.com/?a=1&b=2', 'https://example.com/?a=1&b=2'],
      [
        'legacy name before =',
        'https://example.com/?a=1&copy=2&not=3',
        'https://example.com/?a=1&copy=2&not=3',
      ],
      [
        'legacy prefix of a longer name',
        'https://example.com/?a&notit&b',
        'https://example.com/?a&notit&b',
      ],
      [
        'non-legacy name without ;',
        'https://example.com/?x&lang&utm_medium',
        'https://example.com/?x&lang&utm_medium',
      ],
      ['& before a digit', 'https://example.com/?a&1b;', 'https://example.com/?a&1b;'],
      ['&# without digits', 'https://example.com/&#;&#x;&#xg', 'https://example.com/&#;&#x;&#xg'],
      ['trailing &', 'https://example.com/&', 'https://example.com/&'],
    ])('%s', (_label, href, url) => {
      const result = rewriteLinks(`<a href="${href}">x</a>`, click);

      expect(result.links).toEqual([{ index: 0, url }]);
      expect(result.html).toBe('<a href="https://t.example/c/0">x</a>');
    });

    it.each([
      ['an unknown named reference with ;', 'https://example.com/&hellip;'],
      ['a named reference this module does not decode', 'https://example.com/?a=&copy;'],
      ['a legacy name decoded without ;', 'https://example.com/?a=1&not&b=2'],
      ['a legacy name at the end', 'https://example.com/?x=&para'],
      ['NUL', 'https://example.com/&#0;'],
      ['a C1 control', 'https://example.com/&#x80;'],
      ['a surrogate', 'https://example.com/&#xD800;'],
      ['beyond U+10FFFF', 'https://example.com/&#x110000;'],
      ['a huge number', `https://example.com/&#${'9'.repeat(50)};`],
      ['a control character', 'https://example.com/&#10;'],
    ])('and skips the link when the result is ambiguous or unsafe: %s', (_label, href) => {
      expectUntouched(`<a href="${href}">x</a>`);
    });
  });

  describe('maxLinks', () => {
    const html =
      '<a href="https://example.com/0">0</a><a href="https://example.com/1">1</a>' +
      '<a href="https://example.com/2">2</a>';

    it('leaves links beyond the cap untouched', () => {
      const calls: number[] = [];

      const result = rewriteLinks(
        html,
        (index) => {
          calls.push(index);
          return click(index);
        },
        2,
      );

      expect(calls).toEqual([0, 1]);
      expect(result.links.map((link) => link.index)).toEqual([0, 1]);
      expect(result.html).toBe(
        '<a href="https://t.example/c/0">0</a><a href="https://t.example/c/1">1</a>' +
          '<a href="https://example.com/2">2</a>',
      );
    });

    it('tracks nothing at 0', () => {
      const result = rewriteLinks(html, click, 0);

      expect(result).toEqual({ html, links: [] });
    });

    it('accepts Infinity', () => {
      expect(rewriteLinks(html, click, Infinity).links).toHaveLength(3);
    });

    it('defaults to 500', () => {
      const many = Array.from(
        { length: 600 },
        (_, i) => `<a href="https://example.com/${i}">${i}</a>`,
      );

      const result = rewriteLinks(many.join('\n'), click);

      expect(result.links).toHaveLength(500);
      expect(result.links[499]).toEqual({ index: 499, url: 'https://example.com/499' });
      expect(result.html.split('\n')[499]).toBe('<a href="https://t.example/c/499">499</a>');
      expect(result.html.split('\n').slice(500)).toEqual(many.slice(500));
    });

    it.each([-1, 1.5, Number.NaN, -Infinity])('rejects %p', (maxLinks) => {
      expect(() => rewriteLinks(html, click, maxLinks)).toThrow(RangeError);
    });
  });

  it('returns the same string when nothing is tracked', () => {
    const html = '<p>No links here. <a href="mailto:x@example.com">mail</a></p>';

    expect(rewriteLinks(html, click).html).toBe(html);
    expect(rewriteLinks('', click)).toEqual({ html: '', links: [] });
  });

  describe('on pathological input (1 MB)', () => {
    const MB = 1 << 20;
    const fill = (unit: string): string => unit.repeat(Math.ceil(MB / unit.length));

    it.each([
      ['unclosed hrefs', fill('<a href="')],
      ['alternating unclosed quotes', fill(`<a href="<a x='`)],
      ['bare <a', fill('<a')],
      ['<a and a space', fill('<a ')],
      ['attributes without end', '<a ' + fill('x=1 ')],
      ['quoted attributes without end', '<a ' + fill('x="1" ')],
      ['stray slashes', '<a ' + fill('/')],
      ['equals signs', '<a href' + fill('=')],
      ['<', fill('<')],
      ['</', fill('</')],
      ['comment openers', fill('<!--')],
      ['comment dashes', '<!--' + fill('-')],
      ['bogus comments', fill('<!')],
      ['CDATA openers', fill('<![CDATA[')],
      ['script openers', fill('<script>')],
      ['script end-tag lookalikes', '<script>' + fill('</scrip')],
      ['many valid links', fill('<a href="https://example.com/x?y=1&amp;z=2">x</a>')],
      ['many skipped links', fill('<a href="mailto:x@example.com" data-as-no-track>x</a>')],
      ['a huge href', '<a href="https://example.com/' + fill('a') + '">x</a>'],
      ['a huge href of ampersands', '<a href="https://example.com/' + fill('&') + '">x</a>'],
      ['a huge href of references', '<a href="https://example.com/' + fill('&amp;') + '">x</a>'],
      ['a huge numeric reference', '<a href="https://example.com/&#' + fill('1') + '">x</a>'],
      ['a huge named-reference run', '<a href="https://example.com/&' + fill('a') + '">x</a>'],
      ['a huge template variable', '<a href="{{' + fill(' ') + '">x</a>'],
    ])('%s', (_label, html) => {
      const result = rewriteLinks(html, click);

      expect(result.links.length).toBeLessThanOrEqual(500);
      expect(typeof appendOpenPixel(html, 'https://t.example/o')).toBe('string');
    });
  });
});

describe('appendOpenPixel', () => {
  const pixel =
    '<img src="https://t.example/o/abc" width="1" height="1" alt="" ' +
    'style="display:block;width:1px;height:1px;border:0" />';

  it('goes just before </body>', () => {
    expect(appendOpenPixel('<html><body><p>x</p></body></html>', 'https://t.example/o/abc')).toBe(
      `<html><body><p>x</p>${pixel}</body></html>`,
    );
  });

  it('matches </body> case-insensitively and with trailing whitespace', () => {
    expect(appendOpenPixel('<BODY>x</BODY>', 'https://t.example/o/abc')).toBe(
      `<BODY>x${pixel}</BODY>`,
    );
    expect(appendOpenPixel('<body>x</Body\n>', 'https://t.example/o/abc')).toBe(
      `<body>x${pixel}</Body\n>`,
    );
  });

  it('goes before the last </body>', () => {
    expect(appendOpenPixel('<body>a</body>b</body>c', 'https://t.example/o/abc')).toBe(
      `<body>a</body>b${pixel}</body>c`,
    );
  });

  it('ignores </body> in comments and raw text', () => {
    expect(
      appendOpenPixel(
        '<body>x</body><!-- </body> --><script>"</body>"</script>',
        'https://t.example/o/abc',
      ),
    ).toBe(`<body>x${pixel}</body><!-- </body> --><script>"</body>"</script>`);
  });

  it('ignores elements that only start with body', () => {
    expect(appendOpenPixel('<p>x</p></bodyx>', 'https://t.example/o/abc')).toBe(
      `<p>x</p></bodyx>${pixel}`,
    );
  });

  it('goes at the end without </body>', () => {
    expect(appendOpenPixel('<p>hello</p>', 'https://t.example/o/abc')).toBe(`<p>hello</p>${pixel}`);
    expect(appendOpenPixel('', 'https://t.example/o/abc')).toBe(pixel);
  });

  it('escapes the URL', () => {
    expect(appendOpenPixel('', `https://t.example/o?a=1&b="2"'`)).toBe(
      '<img src="https://t.example/o?a=1&amp;b=&quot;2&quot;&#39;" width="1" height="1" alt="" ' +
        'style="display:block;width:1px;height:1px;border:0" />',
    );
  });

  it('composes with rewriteLinks without tracking the pixel', () => {
    const { html } = rewriteLinks('<body><a href="https://example.com/">x</a></body>', click);

    const withPixel = appendOpenPixel(html, 'https://t.example/o/abc');

    expect(withPixel).toBe(`<body><a href="https://t.example/c/0">x</a>${pixel}</body>`);
  });
});
