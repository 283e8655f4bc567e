import { MAX_JSON_DEPTH, parseStrictJson, STRICT_JSON_MESSAGES } from './strict-json';

function parse(text: string): unknown {
  return parseStrictJson(Buffer.from(text, 'utf8'));
}

function expectRefused(text: string | Buffer, message: string): void {
  const body = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  expect(() => parseStrictJson(body)).toThrow(
    expect.objectContaining({ name: 'StrictJsonError', message }) as Error,
  );
}

function nestedArrays(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

function nestedObjects(depth: number): string {
  return '{"a":'.repeat(depth - 1) + '{}' + '}'.repeat(depth - 1);
}

describe('parseStrictJson', () => {
  it('parses JSON as JSON.parse does', () => {
    const text = JSON.stringify({
      label: 'key',
      scopes: ['a', 'b'],
      nested: { n: -1.5e3, t: true, f: false, z: null, empty: {}, list: [] },
      text: 'quote " backslash \\ tab \t newline \n é 😀 \u2028',
    });
    expect(parse(text)).toEqual(JSON.parse(text));
  });

  it('parses every kind of top-level value and surrounding whitespace', () => {
    expect(parse(' \t\r\n{ "a" : [ 1 , 2 ] }\n ')).toEqual({ a: [1, 2] });
    expect(parse('[]')).toEqual([]);
    expect(parse('"text"')).toBe('text');
    expect(parse('42')).toBe(42);
    expect(parse('-0.5E+2')).toBe(-50);
    expect(parse('null')).toBeNull();
  });

  it('accepts a leading byte order mark', () => {
    expect(parse('\ufeff{"a":1}')).toEqual({ a: 1 });
  });

  it('refuses an empty body, and text that is not JSON', () => {
    expectRefused('', STRICT_JSON_MESSAGES.empty);
    for (const text of [
      ' ',
      '{"a": 1',
      '{"a" 1}',
      '{"a":1,}',
      "{'a':1}",
      '[1 2]',
      'tru',
      '"\\x"',
    ]) {
      expectRefused(text, STRICT_JSON_MESSAGES.notJson);
    }
  });

  it('refuses a raw control character inside a string as invalid JSON', () => {
    expectRefused('{"a":"x\u0000y"}', STRICT_JSON_MESSAGES.notJson);
    expectRefused('{"a":"x\ny"}', STRICT_JSON_MESSAGES.notJson);
  });

  describe('nesting depth', () => {
    it(`accepts exactly ${MAX_JSON_DEPTH} levels of arrays and of objects`, () => {
      expect(() => parse(nestedArrays(MAX_JSON_DEPTH))).not.toThrow();
      expect(() => parse(nestedObjects(MAX_JSON_DEPTH))).not.toThrow();
      expect(() => parse(`{"a":${nestedArrays(MAX_JSON_DEPTH - 1)}}`)).not.toThrow();
    });

    it(`refuses ${MAX_JSON_DEPTH + 1} levels`, () => {
      expectRefused(nestedArrays(MAX_JSON_DEPTH + 1), STRICT_JSON_MESSAGES.tooDeep);
      expectRefused(nestedObjects(MAX_JSON_DEPTH + 1), STRICT_JSON_MESSAGES.tooDeep);
      expectRefused(`{"a":${nestedArrays(MAX_JSON_DEPTH)}}`, STRICT_JSON_MESSAGES.tooDeep);
    });

    it('refuses very deep nesting quickly, even when it never closes', () => {
      expectRefused(nestedArrays(10_000), STRICT_JSON_MESSAGES.tooDeep);
      expectRefused('[{"a":'.repeat(1_000_000), STRICT_JSON_MESSAGES.tooDeep);
    });

    it('counts only open containers, not siblings', () => {
      const siblings = `[${Array.from({ length: 1000 }, () => nestedArrays(MAX_JSON_DEPTH - 1)).join(',')}]`;
      expect(() => parse(siblings)).not.toThrow();
    });

    it('ignores brackets inside strings', () => {
      const text = JSON.stringify({ a: '['.repeat(1000), b: '{'.repeat(1000) });
      expect(parse(text)).toEqual(JSON.parse(text));
    });
  });

  describe('duplicate keys', () => {
    it('refuses a duplicate key at the top level and nested at any depth', () => {
      expectRefused('{"label":"a","label":"b"}', STRICT_JSON_MESSAGES.duplicateKey('label'));
      expectRefused('{"a":{"b":[{"c":1,"d":2,"c":3}]}}', STRICT_JSON_MESSAGES.duplicateKey('c'));
      expectRefused('[{}, {"x":1}, {"y":1,"y":2}]', STRICT_JSON_MESSAGES.duplicateKey('y'));
    });

    it('refuses keys that are the same once their escapes are decoded', () => {
      expectRefused('{"a":1,"\\u0061":2}', STRICT_JSON_MESSAGES.duplicateKey('a'));
      expectRefused('{"\\"q\\"":1,"\\u0022q\\u0022":2}', STRICT_JSON_MESSAGES.duplicateKey('"q"'));
      expectRefused('{"😀":1,"\\ud83d\\ude00":2}', STRICT_JSON_MESSAGES.duplicateKey('😀'));
    });

    it('accepts the same key in different objects, and keys that differ only in case', () => {
      expect(parse('{"a":{"a":1},"b":{"a":2},"c":[{"a":3},{"a":4}]}')).toEqual({
        a: { a: 1 },
        b: { a: 2 },
        c: [{ a: 3 }, { a: 4 }],
      });
      expect(parse('{"a":1,"A":2}')).toEqual({ a: 1, A: 2 });
    });

    it('does not take string values for keys', () => {
      expect(parse('{"a":"a","b":"a","c":["a","a"]}')).toEqual({
        a: 'a',
        b: 'a',
        c: ['a', 'a'],
      });
    });

    it('keeps a long key short in the message', () => {
      const key = 'k'.repeat(1000);
      expectRefused(`{"${key}":1,"${key}":2}`, `duplicate key "${'k'.repeat(64)}…" in JSON object`);
    });
  });

  describe('prototype-reaching keys', () => {
    it('refuses __proto__ and constructor keys at any depth, escaped or not', () => {
      for (const [text, key] of [
        ['{"__proto__":{"admin":true}}', '__proto__'],
        ['{"a":[{"constructor":{"prototype":{}}}]}', 'constructor'],
        ['{"constructor":"x"}', 'constructor'],
        ['{"\\u005f_proto__":{}}', '__proto__'],
      ]) {
        expectRefused(text, STRICT_JSON_MESSAGES.forbiddenKey(key));
      }
    });

    it('accepts them as string values', () => {
      expect(parse('{"a":"__proto__","b":["constructor"]}')).toEqual({
        a: '__proto__',
        b: ['constructor'],
      });
    });
  });

  describe('NUL characters', () => {
    it('refuses an escaped NUL in a value or a key, at any depth', () => {
      for (const text of [
        '"\\u0000"',
        '{"label":"a\\u0000b"}',
        '{"a":{"b":["ok","x\\u0000"]}}',
        '{"a\\u0000":1}',
        '{"to":[{"email":"a@b.c","name":"\\u0000"}]}',
      ]) {
        expectRefused(text, STRICT_JSON_MESSAGES.nul);
      }
    });

    it('tells an escaped backslash followed by u0000 from an escape', () => {
      expect(parse('{"a":"\\\\u0000"}')).toEqual({ a: '\\u0000' });
    });
  });

  describe('surrogates', () => {
    it('accepts surrogate pairs, escaped and raw', () => {
      expect(parse('{"a":"\\ud83d\\ude00","b":"😀","c":"\\uD83D\\uDE00x\\ud800\\udc00"}')).toEqual({
        a: '😀',
        b: '😀',
        c: '😀x𐀀',
      });
    });

    it('refuses a lone high or low surrogate escape, in values and keys', () => {
      for (const text of [
        '"\\ud800"',
        '"\\udc00"',
        '"\\uDBFF"',
        '"\\uDFFFx"',
        '{"a":"x\\ud800y"}',
        '{"a":"\\ud800\\u0041"}',
        '{"a":"\\ud800\\ud800\\udc00"}',
        '{"a":"\\ud83d\\ude00\\ude00"}',
        '{"a":"\\udc00\\ud800"}',
        '{"a":"\\ud800\\\\udc00"}',
        '{"\\ud800":1}',
        '{"a":{"b":["\\udfff"]}}',
      ]) {
        expectRefused(text, STRICT_JSON_MESSAGES.loneSurrogate);
      }
    });
  });

  describe('UTF-8', () => {
    it('refuses bytes that are not UTF-8', () => {
      const prefix = Buffer.from('{"a":"', 'utf8');
      const suffix = Buffer.from('"}', 'utf8');
      for (const bytes of [
        [0xff],
        [0xc3],
        [0xc0, 0x80],
        [0xed, 0xa0, 0x80],
        [0xf4, 0x90, 0x80, 0x80],
      ]) {
        expectRefused(
          Buffer.concat([prefix, Buffer.from(bytes), suffix]),
          STRICT_JSON_MESSAGES.notUtf8,
        );
      }
    });
  });

  it('parses big strings and many numbers', () => {
    const attachment = Buffer.alloc(3 * 1024 * 1024, 7).toString('base64');
    const numbers = Array.from({ length: 10_000 }, (_, index) => index * 1.25 - 3);
    const text = JSON.stringify({ attachments: [{ content: attachment }], numbers });
    expect(parse(text)).toEqual({ attachments: [{ content: attachment }], numbers });
  });
});
