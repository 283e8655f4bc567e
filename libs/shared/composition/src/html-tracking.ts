/**
 * Open and click tracking for HTML bodies (platform notes 3.3; reliability plan items 27–28).
 *
 * A single forward pass over the HTML, modelled on the WHATWG tokenizer: every character is
 * consumed once and nothing is ever re-scanned, so the cost is linear in the input whatever it
 * holds. Comments, bogus comments (`<!…>`, `<?…>`), CDATA sections and the content of raw-text
 * elements (`<script>`, `<style>`, `<textarea>`, `<title>`, …) are skipped, so a link-looking
 * string in them is never an element. Only the bytes of a rewritten href value change; when in
 * doubt a link is left alone (an untracked link still works; a wrongly rewritten one may not).
 */

/** A link to track: its position among tracked links (0-based) and its exact href value. */
export interface TrackedLink {
  index: number;
  url: string;
}

const DEFAULT_MAX_LINKS = 500;

/**
 * Rewrites the HTML's trackable links to `clickUrl(index)`, per platform notes 3.3: only <a …> elements
 * (case-insensitive tag and attribute names) whose href is quoted (single or double quotes) with no
 * whitespace around `=`, and whose value starts with http:// or https:// (case-insensitive); skipped:
 * links with no scheme or any other scheme (mailto:, javascript:, data:, #anchors, relative), malformed
 * tags, an href that is only a template variable (e.g. "{{ url }}" or "{{url}}" — after rendering this can
 * still appear literally), links carrying a `data-as-no-track` attribute (any value or none), anything
 * in HTML comments. The href value is HTML-entity-decoded (&amp; → &, numeric entities) to obtain `url`,
 * and must then parse as an absolute http(s) URL (new URL) or the link is skipped. Everything else in the
 * HTML stays byte-identical. Returns the new HTML and the tracked links in document order.
 *
 * A tag is malformed when the tokenizer meets a parse error in it that can change how it is read:
 * end of input inside it, a quote or `<` in an attribute name, a name starting with `=`, no
 * whitespace after a quoted value, a `/` not followed by `>`, a bad character in an unquoted
 * value, an empty value (`href=>`), or a second href. An href whose character references are
 * ambiguous without the full HTML entity table (a named reference other than amp, lt, gt, quot
 * and apos; a numeric one to a control character, a surrogate or beyond U+10FFFF) or whose value
 * holds a control character is skipped too. `maxLinks` (default 500) caps the tracked links;
 * later ones are left untouched.
 */
export function rewriteLinks(
  html: string,
  clickUrl: (index: number) => string,
  maxLinks: number = DEFAULT_MAX_LINKS,
): { html: string; links: TrackedLink[] } {
  if (!(maxLinks >= 0) || (!Number.isInteger(maxLinks) && maxLinks !== Infinity)) {
    throw new RangeError(`rewriteLinks: maxLinks must be a non-negative integer, got ${maxLinks}`);
  }
  const links: TrackedLink[] = [];
  if (maxLinks === 0) return { html, links };

  const parts: string[] = [];
  let copied = 0;
  scanTags(html, true, (tag) => {
    if (tag.kind !== 'start' || tag.name !== 'a') return true;
    const href = trackableHref(html, tag);
    if (href === null) return true;
    const index = links.length;
    links.push({ index, url: href.url });
    parts.push(html.slice(copied, href.valueStart), escapeAttribute(clickUrl(index)));
    copied = href.valueEnd;
    return links.length < maxLinks;
  });
  if (links.length === 0) return { html, links };
  parts.push(html.slice(copied));
  return { html: parts.join(''), links };
}

/** Adds a transparent 1×1 open-tracking image: just before the last </body> (case-insensitive), else at the end. */
export function appendOpenPixel(html: string, pixelUrl: string): string {
  const pixel =
    `<img src="${escapeAttribute(pixelUrl)}" width="1" height="1" alt="" ` +
    'style="display:block;width:1px;height:1px;border:0" />';
  // The last real </body> end tag: one inside a comment or raw text would hide the pixel.
  let lastBodyCloser = -1;
  scanTags(html, false, (tag) => {
    if (tag.kind === 'end' && tag.name === 'body') lastBodyCloser = tag.start;
    return true;
  });
  if (lastBodyCloser === -1) return html + pixel;
  return html.slice(0, lastBodyCloser) + pixel + html.slice(lastBodyCloser);
}

/** Escapes a value for a quoted attribute (either quote style). */
function escapeAttribute(value: string): string {
  return value.replace(/[&"']/g, (c) => (c === '&' ? '&amp;' : c === '"' ? '&quot;' : '&#39;'));
}

// ---------------------------------------------------------------------------------------------
// Link selection

/** Only a mustache/handlebars variable, as left behind when rendering did not replace it. */
const TEMPLATE_ONLY = /^\s*\{\{\{?[^{}]*\}?\}\}\s*$/;
const HTTP_SCHEME = /^https?:\/\//i;

function trackableHref(
  html: string,
  tag: Tag,
): { url: string; valueStart: number; valueEnd: number } | null {
  if (tag.malformed) return null;
  let href: Attribute | undefined;
  for (const attribute of tag.attributes) {
    if (attribute.name === 'data-as-no-track') return null;
    if (attribute.name === 'href') {
      if (href !== undefined) return null;
      href = attribute;
    }
  }
  if (href === undefined || !href.quoted || href.spacedEquals) return null;
  const url = decodeAttributeValue(html.slice(href.valueStart, href.valueEnd));
  if (url === null || !isTrackableUrl(url)) return null;
  return { url, valueStart: href.valueStart, valueEnd: href.valueEnd };
}

function isTrackableUrl(url: string): boolean {
  // The scheme test below rejects template variables too; the explicit test documents the rule.
  if (TEMPLATE_ONLY.test(url) || !HTTP_SCHEME.test(url)) return false;
  for (let i = 0; i < url.length; i++) {
    const c = url.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return false;
  }
  try {
    const { protocol } = new URL(url);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Character references in attribute values

/** Named references decoded here (each also valid without `;`, except apos). */
const SIMPLE_NAMED: ReadonlyMap<string, string> = new Map([
  ['amp', '&'],
  ['AMP', '&'],
  ['lt', '<'],
  ['LT', '<'],
  ['gt', '>'],
  ['GT', '>'],
  ['quot', '"'],
  ['QUOT', '"'],
  ['apos', "'"],
]);

/**
 * The 106 named references that HTML also decodes without a `;` (WHATWG entities table). In an
 * attribute such a name is decoded unless `=` or an alphanumeric follows, so `&copy=1` stays
 * literal but `&not&x` becomes `¬&x`.
 */
const LEGACY_NAMED: ReadonlySet<string> = new Set(
  (
    'AElig AMP Aacute Acirc Agrave Aring Atilde Auml COPY Ccedil ETH Eacute Ecirc Egrave Euml GT ' +
    'Iacute Icirc Igrave Iuml LT Ntilde Oacute Ocirc Ograve Oslash Otilde Ouml QUOT REG THORN ' +
    'Uacute Ucirc Ugrave Uuml Yacute aacute acirc acute aelig agrave amp aring atilde auml brvbar ' +
    'ccedil cedil cent copy curren deg divide eacute ecirc egrave eth euml frac12 frac14 frac34 gt ' +
    'iacute icirc iexcl igrave iquest iuml laquo lt macr micro middot nbsp not ntilde oacute ocirc ' +
    'ograve ordf ordm oslash otilde ouml para plusmn pound quot raquo reg sect shy sup1 sup2 sup3 ' +
    'szlig thorn times uacute ucirc ugrave uml uuml yacute yen yuml'
  ).split(' '),
);

/**
 * Decodes an attribute value as a browser would, or null when that cannot be done with certainty
 * here (see rewriteLinks).
 */
function decodeAttributeValue(raw: string): string | null {
  if (!raw.includes('&')) return raw;
  let out = '';
  let i = 0;
  for (;;) {
    const amp = raw.indexOf('&', i);
    if (amp === -1) return out + raw.slice(i);
    out += raw.slice(i, amp);
    const ref =
      raw.charCodeAt(amp + 1) === HASH ? numericReference(raw, amp) : namedReference(raw, amp);
    if (ref === null) return null;
    out += ref.text;
    i = ref.end;
  }
}

/** `&#…`: decimal or hex digits, `;` optional. A bare `&#`/`&#x` stays literal. */
function numericReference(raw: string, amp: number): { text: string; end: number } | null {
  const hex = (raw.charCodeAt(amp + 2) | 0x20) === 0x78; // x or X
  let p = amp + (hex ? 3 : 2);
  const digitsStart = p;
  let value = 0;
  for (; p < raw.length; p++) {
    const digit = digitValue(raw.charCodeAt(p), hex);
    if (digit === -1) break;
    value = Math.min(value * (hex ? 16 : 10) + digit, 0x110000);
  }
  if (p === digitsStart) return { text: '&', end: amp + 1 };
  if (raw.charCodeAt(p) === SEMICOLON) p++;
  const printable =
    (value >= 0x20 && value < 0x7f) ||
    (value >= 0xa0 && value <= 0x10ffff && (value < 0xd800 || value > 0xdfff));
  return printable ? { text: String.fromCodePoint(value), end: p } : null;
}

function namedReference(raw: string, amp: number): { text: string; end: number } | null {
  let p = amp + 1;
  while (p < raw.length && isAsciiAlphanumeric(raw.charCodeAt(p))) p++;
  const name = raw.slice(amp + 1, p);
  const literal = { text: '&', end: amp + 1 };
  if (name === '' || !isAsciiAlpha(name.charCodeAt(0))) return literal;
  const next = raw.charCodeAt(p);
  if (next === SEMICOLON) {
    const text = SIMPLE_NAMED.get(name);
    // Any other `&name;` may be one of the ~2,000 named references: ambiguous.
    return text === undefined ? null : { text, end: p + 1 };
  }
  // Without `;` only a legacy name that is the whole alphanumeric run and is not followed by `=`
  // is decoded (a shorter legacy prefix would be followed by an alphanumeric: literal).
  if (!LEGACY_NAMED.has(name) || next === EQUALS) return literal;
  const text = SIMPLE_NAMED.get(name);
  return text === undefined ? null : { text, end: p };
}

function digitValue(c: number, hex: boolean): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (!hex) return -1;
  const lower = c | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

// ---------------------------------------------------------------------------------------------
// Tokenizer

interface Attribute {
  /** ASCII-lowercased. */
  name: string;
  /** The value's bounds in the HTML, quotes excluded; both -1 when the attribute has no value. */
  valueStart: number;
  valueEnd: number;
  quoted: boolean;
  /** Whitespace before or after the `=`. */
  spacedEquals: boolean;
}

interface Tag {
  kind: 'start' | 'end';
  /** ASCII-lowercased. */
  name: string;
  /** Index of the `<`. */
  start: number;
  /** Index just past the `>`. */
  end: number;
  /** Only the attributes link selection reads (href, data-as-no-track), of `a` start tags. */
  attributes: Attribute[];
  /** A parse error that can change how the tag is read (see rewriteLinks). */
  malformed: boolean;
}

const TAB = 0x09;
const LF = 0x0a;
const FF = 0x0c;
const CR = 0x0d;
const SPACE = 0x20;
const BANG = 0x21;
const DQUOTE = 0x22;
const HASH = 0x23;
const SQUOTE = 0x27;
const SLASH = 0x2f;
const SEMICOLON = 0x3b;
const LT = 0x3c;
const EQUALS = 0x3d;
const GT = 0x3e;
const QUESTION = 0x3f;
const BACKTICK = 0x60;

const LINK_ATTRIBUTES: ReadonlySet<string> = new Set(['href', 'data-as-no-track']);

/** Elements whose content is text up to their end tag; `plaintext` never ends. */
const RAW_TEXT: ReadonlySet<string> = new Set([
  'script',
  'style',
  'textarea',
  'title',
  'xmp',
  'iframe',
  'noembed',
  'noframes',
  'noscript',
  'plaintext',
]);

function isSpace(c: number): boolean {
  return c === SPACE || c === LF || c === TAB || c === FF || c === CR;
}

function isAsciiAlpha(c: number): boolean {
  const lower = c | 0x20;
  return lower >= 0x61 && lower <= 0x7a;
}

function isAsciiAlphanumeric(c: number): boolean {
  return isAsciiAlpha(c) || (c >= 0x30 && c <= 0x39);
}

/** Lowercases A–Z only, as HTML does (String#toLowerCase also maps e.g. U+212A KELVIN SIGN to k). */
function asciiLower(value: string): string {
  return value.replace(/[A-Z]+/g, (s) => s.toLowerCase());
}

/**
 * Calls `visit` with each start and end tag in document order, until it returns false. A tag cut
 * off by the end of input is not a tag (the rest of the input belongs to it).
 */
function scanTags(
  html: string,
  collectLinkAttributes: boolean,
  visit: (tag: Tag) => boolean,
): void {
  const length = html.length;
  let i = 0;
  while (i < length) {
    const lt = html.indexOf('<', i);
    if (lt === -1) return;
    const next = html.charCodeAt(lt + 1);
    if (next === BANG) {
      i = skipMarkupDeclaration(html, lt);
    } else if (next === QUESTION) {
      i = skipPast(html, '>', lt + 2);
    } else if (next === SLASH) {
      const after = html.charCodeAt(lt + 2);
      if (isAsciiAlpha(after)) {
        const tag = readTag(html, lt, lt + 2, 'end', false);
        if (tag === null || !visit(tag)) return;
        i = tag.end;
      } else {
        // `</>` is dropped; `</` + anything else opens a bogus comment.
        i = after === GT ? lt + 3 : skipPast(html, '>', lt + 2);
      }
    } else if (isAsciiAlpha(next)) {
      const tag = readTag(html, lt, lt + 1, 'start', collectLinkAttributes);
      if (tag === null || !visit(tag)) return;
      i = RAW_TEXT.has(tag.name) ? rawTextEnd(html, tag.name, tag.end) : tag.end;
    } else {
      i = lt + 1;
    }
  }
}

/** Index just past the first `needle` at or after `from`, or the end of input. */
function skipPast(html: string, needle: string, from: number): number {
  const at = html.indexOf(needle, from);
  return at === -1 ? html.length : at + needle.length;
}

/** `<!--…-->` (also closed by `--!>`, and `<!-->`/`<!--->`), `<![CDATA[…]]>`, `<!…>`. */
function skipMarkupDeclaration(html: string, lt: number): number {
  if (html.startsWith('<!--', lt)) {
    const body = lt + 4;
    if (html.charCodeAt(body) === GT) return body + 1;
    if (html.startsWith('->', body)) return body + 2;
    for (
      let dashes = html.indexOf('--', body);
      dashes !== -1;
      dashes = html.indexOf('--', dashes + 1)
    ) {
      if (html.charCodeAt(dashes + 2) === GT) return dashes + 3;
      if (html.startsWith('!>', dashes + 2)) return dashes + 4;
    }
    return html.length;
  }
  // In HTML content a CDATA section is a bogus comment ending at the first `>`; in SVG/MathML it
  // runs to `]]>`. Skipping to `]]>` never exposes CDATA content as markup.
  if (html.startsWith('<![CDATA[', lt)) return skipPast(html, ']]>', lt + 9);
  return skipPast(html, '>', lt + 2);
}

/** Where the raw text opened by `<name…>` ends: at its `</name` end tag, or the end of input. */
function rawTextEnd(html: string, name: string, from: number): number {
  if (name === 'plaintext') return html.length;
  for (let at = html.indexOf('</', from); at !== -1; at = html.indexOf('</', at + 2)) {
    const end = at + 2 + name.length;
    if (asciiLower(html.slice(at + 2, end)) !== name) continue;
    const c = html.charCodeAt(end);
    if (isSpace(c) || c === SLASH || c === GT) return at;
  }
  return html.length;
}

/** Tokenizes the tag whose name starts at `nameStart`; null if the input ends inside it. */
function readTag(
  html: string,
  lt: number,
  nameStart: number,
  kind: Tag['kind'],
  collectLinkAttributes: boolean,
): Tag | null {
  const length = html.length;
  let p = nameStart;
  while (p < length) {
    const c = html.charCodeAt(p);
    if (isSpace(c) || c === SLASH || c === GT) break;
    p++;
  }
  const name = asciiLower(html.slice(nameStart, p));
  const collect = collectLinkAttributes && kind === 'start' && name === 'a';
  const attributes: Attribute[] = [];
  const keep = (found: Attribute): void => {
    if (LINK_ATTRIBUTES.has(found.name)) attributes.push(found);
  };
  let malformed = false;

  for (;;) {
    while (p < length && isSpace(html.charCodeAt(p))) p++;
    if (p >= length) return null;
    let c = html.charCodeAt(p);
    if (c === GT) return { kind, name, start: lt, end: p + 1, attributes, malformed };
    if (c === SLASH) {
      if (html.charCodeAt(p + 1) !== GT) malformed = true;
      p++;
      continue;
    }

    // Attribute name.
    const attributeStart = p;
    if (c === EQUALS) {
      malformed = true;
      p++;
    }
    while (p < length) {
      c = html.charCodeAt(p);
      if (isSpace(c) || c === SLASH || c === GT || c === EQUALS) break;
      if (c === DQUOTE || c === SQUOTE || c === LT) malformed = true;
      p++;
    }
    const attributeName = collect ? asciiLower(html.slice(attributeStart, p)) : '';

    let q = p;
    while (q < length && isSpace(html.charCodeAt(q))) q++;
    if (q >= length) return null;
    if (html.charCodeAt(q) !== EQUALS) {
      // No value; whatever follows starts the next attribute (or ends the tag).
      if (collect) keep(attribute(attributeName, -1, -1, false, false));
      p = q;
      continue;
    }
    let spacedEquals = q !== p;
    p = q + 1;
    while (p < length && isSpace(html.charCodeAt(p))) p++;
    spacedEquals ||= p !== q + 1;
    if (p >= length) return null;

    // Attribute value.
    c = html.charCodeAt(p);
    if (c === DQUOTE || c === SQUOTE) {
      const close = html.indexOf(c === DQUOTE ? '"' : "'", p + 1);
      if (close === -1) return null;
      if (collect) keep(attribute(attributeName, p + 1, close, true, spacedEquals));
      p = close + 1;
      const after = html.charCodeAt(p);
      if (p < length && !isSpace(after) && after !== SLASH && after !== GT) malformed = true;
    } else if (c === GT) {
      malformed = true; // `name=>`: missing value
      if (collect) keep(attribute(attributeName, p, p, false, spacedEquals));
    } else {
      const valueStart = p;
      while (p < length) {
        c = html.charCodeAt(p);
        if (isSpace(c) || c === GT) break;
        if (c === DQUOTE || c === SQUOTE || c === LT || c === EQUALS || c === BACKTICK) {
          malformed = true;
        }
        p++;
      }
      if (collect) keep(attribute(attributeName, valueStart, p, false, spacedEquals));
    }
  }
}

function attribute(
  name: string,
  valueStart: number,
  valueEnd: number,
  quoted: boolean,
  spacedEquals: boolean,
): Attribute {
  return { name, valueStart, valueEnd, quoted, spacedEquals };
}
