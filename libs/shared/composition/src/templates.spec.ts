import {
  mergeSubstitutions,
  type MessageTemplates,
  renderTemplates,
  renderTemplatesBatch,
  TEMPLATE_LIMITS,
  TemplateRenderError,
} from './templates';

function failure(run: () => unknown): TemplateRenderError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(TemplateRenderError);
    return error as TemplateRenderError;
  }
  throw new Error('expected a TemplateRenderError');
}

const text = (source: string, substitutions: Record<string, unknown> = { _: 1 }) =>
  renderTemplates({ subject: 's', text: source }, substitutions).text;
const html = (source: string, substitutions: Record<string, unknown> = { _: 1 }) =>
  renderTemplates({ subject: 's', html: source }, substitutions).html;

/** The limits, with a time limit a test may raise where only a size limit is under test. */
const adjustableLimits: { timeoutMs: number } = TEMPLATE_LIMITS;

afterEach(() => {
  jest.restoreAllMocks();
});

describe('renderTemplates', () => {
  describe('when content is a template', () => {
    const templates: MessageTemplates = {
      subject: 'Hi {{ name }}',
      text: 'Hi {{ name }}',
      html: '<p>{{ name }}</p>',
      amp: '<p>{{ name }}</p>',
    };

    it.each([
      ['undefined', undefined],
      ['{}', {}],
    ])('returns the templates unchanged with %s substitutions', (_case, substitutions) => {
      expect(renderTemplates(templates, substitutions)).toBe(templates);
    });

    it('renders without substitutions when asked to', () => {
      expect(
        renderTemplates({ subject: 'Hi {{ name|default("Friend") }}' }, undefined, {
          always: true,
        }),
      ).toEqual({ subject: 'Hi Friend' });
    });

    it('renders every field and leaves absent ones absent', () => {
      expect(renderTemplates(templates, { name: 'Ann' })).toEqual({
        subject: 'Hi Ann',
        text: 'Hi Ann',
        html: '<p>Ann</p>',
        amp: '<p>Ann</p>',
      });
      expect(renderTemplates({ subject: '{{ a }}' }, { a: 1 })).toEqual({ subject: '1' });
    });
  });

  describe('Jinja syntax (platform notes 3.8)', () => {
    it('substitutes variables of every JSON type', () => {
      expect(
        text('{{ s }}|{{ i }}|{{ f }}|{{ t }}|{{ n }}|{{ l|join(",") }}', {
          s: 'x',
          i: 42,
          f: 1.5,
          t: true,
          n: null,
          l: [1, 'a'],
        }),
      ).toBe('x|42|1.5|true|none|1,a');
    });

    it('supports if / elif / else', () => {
      const source = '{% if vip %}VIP{% elif regular %}regular{% else %}guest{% endif %}';
      expect(text(source, { vip: true })).toBe('VIP');
      expect(text(source, { regular: 1 })).toBe('regular');
      expect(text(source, { vip: false })).toBe('guest');
    });

    it('supports for loops with loop variables and else', () => {
      const source =
        '{% for item in items %}{{ loop.index }}. {{ item.name }} x{{ item.qty }}{% if not loop.last %}; {% endif %}{% else %}empty{% endfor %}';
      expect(
        text(source, {
          items: [
            { name: 'Tea', qty: 2 },
            { name: 'Cake', qty: 1 },
          ],
        }),
      ).toBe('1. Tea x2; 2. Cake x1');
      expect(text(source, { items: [] })).toBe('empty');
    });

    it('supports dotted and subscript access', () => {
      expect(
        text('{{ order.customer.name }} {{ order["id"] }} {{ order.lines[1] }}', {
          order: { id: 7, customer: { name: 'Ann' }, lines: ['a', 'b'] },
        }),
      ).toBe('Ann 7 b');
    });

    it('supports the default filter', () => {
      expect(text('Hi {{ name|default("Friend") }}', { other: 1 })).toBe('Hi Friend');
      expect(text('Hi {{ name|default("Friend") }}', { name: 'Ann' })).toBe('Hi Ann');
    });

    it('supports common filters and Jinja2 methods', () => {
      expect(
        text(
          '{{ name|upper }} {{ name|title }} {{ n|round(1) }} {% for k, v in d.items() %}{{ k }}={{ v }}{% endfor %}',
          {
            name: 'ann lee',
            n: 2.345,
            d: { a: 1 },
          },
        ),
      ).toBe('ANN LEE Ann Lee 2.3 a=1');
    });

    it('renders a missing variable empty (lenient, as Jinja)', () => {
      expect(
        text(
          '[{{ missing }}]{% if missing %}y{% else %}n{% endif %}{% for x in missing %}x{% endfor %}',
        ),
      ).toBe('[]n');
    });

    it('makes an attribute of a missing variable an error naming the field', () => {
      const error = failure(() =>
        renderTemplates({ subject: 's', text: 'line 1\nHi {{ user.name }}' }, { other: 1 }),
      );
      expect(error.field).toBe('text_content');
      expect(error.message).toBe('text_content: undefined value (line 2)');
    });

    it('keeps the final newline', () => {
      expect(text('Hi {{ n }}\n', { n: 1 })).toBe('Hi 1\n');
    });
  });

  describe('substitutions', () => {
    it('lets a recipient override the global ones', () => {
      const merged = mergeSubstitutions(
        { name: 'Customer', shop: 'Tea Shop', order: { id: 1 } },
        { name: 'Ann', order: { id: 2 } },
      );
      expect(merged).toEqual({ name: 'Ann', shop: 'Tea Shop', order: { id: 2 } });
      expect(text('{{ name }} @ {{ shop }} #{{ order.id }}', merged)).toBe('Ann @ Tea Shop #2');
    });

    it('merges with either side missing', () => {
      expect(mergeSubstitutions(undefined, { a: 1 })).toEqual({ a: 1 });
      expect(mergeSubstitutions({ a: 1 }, undefined)).toEqual({ a: 1 });
      expect(mergeSubstitutions(undefined, undefined)).toEqual({});
    });

    it('keeps a __proto__ key as a key', () => {
      const recipient = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<
        string,
        unknown
      >;
      const merged = mergeSubstitutions({}, recipient);
      expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
      expect(Object.keys(merged)).toEqual(['__proto__', 'a']);
      expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    });

    it('never renders a value again', () => {
      expect(text('{{ a }}', { a: '{{ b }}{% if 1 %}x{% endif %}', b: 'B' })).toBe(
        '{{ b }}{% if 1 %}x{% endif %}',
      );
    });
  });

  describe('escaping', () => {
    const value = { v: '<script>alert("x")</script> & \'' };

    it('escapes HTML and AMP', () => {
      const out = renderTemplates(
        { subject: '{{ v }}', text: '{{ v }}', html: '<p>{{ v }}</p>', amp: '<p>{{ v }}</p>' },
        value,
      );
      expect(out.html).toBe(
        '<p>&lt;script&gt;alert(&quot;x&quot;)&lt;&#x2f;script&gt; &amp; &#x27;</p>',
      );
      expect(out.amp).toBe(out.html);
      expect(out.text).toBe(value.v);
      expect(out.subject).toBe(value.v);
    });

    it('lets the template author opt out with |safe', () => {
      expect(html('{{ v|safe }}', { v: '<b>x</b>' })).toBe('<b>x</b>');
    });

    it('keeps the escaping mode apart for the same source in text and HTML', () => {
      const out = renderTemplates({ subject: 's', text: '{{ v }}', html: '{{ v }}' }, { v: '<b>' });
      expect(out).toEqual({ subject: 's', text: '<b>', html: '&lt;b&gt;' });
    });
  });

  describe('errors', () => {
    it.each([
      ['subject', { subject: 'Hi {{ name' }],
      ['text_content', { subject: 's', text: '{% for %}' }],
      ['html_content', { subject: 's', html: '<p>\n{% if x %}' }],
      ['amp_content', { subject: 's', amp: '{{ x|nosuchfilter }}' }],
    ] as const)('names %s', (field, templates) => {
      const error = failure(() => renderTemplates(templates, { x: 1 }));
      expect(error.field).toBe(field);
      expect(error.message.startsWith(`${field}: `)).toBe(true);
      expect(error.message).not.toContain('\n');
    });

    it('reports the engine message and line of a syntax error', () => {
      const error = failure(() => renderTemplates({ subject: 's', html: '<p>\n{{ x' }, { x: 1 }));
      expect(error.message).toBe(
        'html_content: syntax error: unexpected end of input, expected end of variable block (line 2)',
      );
    });

    it('rejects a rendered subject that would break the header', () => {
      for (const value of ['a\r\nBcc: x@y', 'a\nb', 'a\0', '=?utf-8?Q?a=0D=0ABcc:_x@y?=']) {
        const error = failure(() => renderTemplates({ subject: 'Hi {{ v }}' }, { v: value }));
        expect(error.field).toBe('subject');
        expect(error.message).toMatch(
          /^the rendered subject (must not contain|contains an encoded word)/,
        );
      }
      expect(text('{{ v }}', { v: 'a\r\nb' })).toBe('a\r\nb');
    });
  });

  describe('sandbox', () => {
    it.each([
      ['include', '{% include "/etc/passwd" %}'],
      ['include with whitespace control', '{%- include "x.html" -%}'],
      ['import', '{% import "macros.html" as m %}'],
      ['from import', '{% from "macros.html" import m %}'],
      ['extends', '{% extends "base.html" %}'],
    ])('refuses %s', (_case, source) => {
      const error = failure(() => renderTemplates({ subject: 's', html: source }, { a: 1 }));
      expect(error.field).toBe('html_content');
      expect(error.message).toContain('templates cannot load other templates');
    });

    it('has no debug() to list the environment', () => {
      expect(failure(() => text('{{ debug() }}')).message).toBe(
        'text_content: unknown function: debug is unknown (line 1)',
      );
    });

    it.each([
      '{{ process }}{{ require }}{{ globalThis }}{{ module }}{{ global }}',
      '{{ x.constructor }}{{ x.__proto__ }}{{ x["constructor"] }}{{ x.toString }}',
      '{{ "".__class__ }}{{ x.__class__ }}',
    ])('reaches no host object: %s', (source) => {
      expect(text(source, { x: {} })).toBe('');
    });

    it('cannot call into host functions', () => {
      expect(() => text('{{ x.constructor("return process")() }}', { x: {} })).toThrow(
        TemplateRenderError,
      );
      expect(() => text('{{ range.__call__ }}{{ cycler.__init__.__globals__ }}')).toThrow(
        TemplateRenderError,
      );
    });

    it('does not carry state from one render to the next', () => {
      expect(text('{% set leaked = "yes" %}{{ leaked }}')).toBe('yes');
      expect(text('[{{ leaked }}]')).toBe('[]');
    });

    it('renders one cached template with each context', () => {
      const source = 'Hi {{ name }}';
      expect(['Ann', 'Bob', 'Cy'].map((name) => text(source, { name }))).toEqual([
        'Hi Ann',
        'Hi Bob',
        'Hi Cy',
      ]);
    });

    it('gives every render its own fuel', () => {
      // About two thirds of the fuel: it fails when fuel is shared between renders.
      const source = `{% for i in range(${Math.floor(TEMPLATE_LIMITS.fuel / 6)}) %}{% endfor %}ok`;
      expect(text(source)).toBe('ok');
      expect(text(source)).toBe('ok');
    });

    it('stops a huge loop (fuel) and keeps working', () => {
      const error = failure(() =>
        text(
          '{% for i in range(100000) %}{% for j in range(100000) %}{{ j }}{% endfor %}{% endfor %}',
        ),
      );
      expect(error.message).toBe('text_content: engine ran out of fuel (line 1)');
      expect(text('{{ a }}', { a: 'still fine' })).toBe('still fine');
    });

    it('stops expensive instructions fuel does not see (time limit) and keeps working', () => {
      const started = Date.now();
      const error = failure(() =>
        html('{% for i in range(100000) %}{{ (range(100000)|join(","))|length }}{% endfor %}'),
      );
      expect(error.field).toBe('html_content');
      expect(error.message).toBe(
        `html_content: template rendering took longer than ${TEMPLATE_LIMITS.timeoutMs} ms`,
      );
      expect(Date.now() - started).toBeLessThan(5000);
      expect(html('{{ a }}', { a: '<ok>' })).toBe('&lt;ok&gt;');
    });

    it('stops a memory bomb (memory cap) and keeps working', () => {
      const error = failure(() => text('{{ ("x" * 200000000)|length }}'));
      expect(error.field).toBe('text_content');
      expect(error.message).toBe(
        'text_content: template rendering exceeded the 128 MiB memory limit',
      );
      expect(text('{{ a }}', { a: 'recovered' })).toBe('recovered');
    });

    it('stops a doubling loop by memory or time, whichever comes first', () => {
      const error = failure(() =>
        text(
          '{% set s = namespace(v="xxxxxxxxxx") %}{% for i in range(40) %}{% set s.v = s.v ~ s.v %}{% endfor %}{{ s.v|length }}',
        ),
      );
      expect(error.message).toMatch(/memory limit|took longer than/);
      // The next render may first wait out the collection of that garbage on a loaded machine.
      jest.replaceProperty(adjustableLimits, 'timeoutMs', 10_000);
      expect(text('{{ a }}', { a: 'recovered' })).toBe('recovered');
    });

    it('limits the rendered size', () => {
      // Producing 11 MB may outlast the time limit on a loaded machine: only the size is tested.
      jest.replaceProperty(adjustableLimits, 'timeoutMs', 10_000);
      const error = failure(() => text('{{ "x" * 11000000 }}'));
      expect(error.message).toBe('the rendered text_content is larger than 10 MiB');
      expect(text('{{ "ab" * 3 }}')).toBe('ababab');
    });

    it('limits the template size', () => {
      const error = failure(() => text(`{{ a }}${'x'.repeat(TEMPLATE_LIMITS.maxChars)}`));
      expect(error.message).toBe('text_content is larger than the 10 MiB template limit');
    });

    it('renders templates larger than the parse cache', () => {
      jest.replaceProperty(adjustableLimits, 'timeoutMs', 10_000);
      const big = `{{ a }}${'x'.repeat(600 * 1024)}`;
      expect(text(big, { a: 'A' })).toBe(`A${'x'.repeat(600 * 1024)}`);
    });
  });
});

describe('renderTemplatesBatch', () => {
  const templates = { subject: 'Hi {{ name|default("Friend") }}', html: '<b>{{ name }}</b>' };

  it('renders once per substitutions and leaves the empty ones alone', () => {
    expect(
      renderTemplatesBatch(templates, [{ name: 'Ann' }, undefined, { name: '<Bob>' }, {}]),
    ).toEqual([
      { subject: 'Hi Ann', html: '<b>Ann</b>' },
      templates,
      { subject: 'Hi <Bob>', html: '<b>&lt;Bob&gt;</b>' },
      templates,
    ]);
  });

  it('renders the empty ones too when asked to', () => {
    expect(renderTemplatesBatch(templates, [undefined], { always: true })).toEqual([
      { subject: 'Hi Friend', html: '<b></b>' },
    ]);
  });

  it('says which entry failed', () => {
    const error = failure(() =>
      renderTemplatesBatch({ subject: '{{ user.name }}' }, [
        {},
        { user: { name: 'a' } },
        { other: 1 },
      ]),
    );
    expect(error.index).toBe(2);
    expect(error.field).toBe('subject');
  });
});
