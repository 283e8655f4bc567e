import { parseQueryString } from './query-string';

/** A plain copy: the parser answers objects without a prototype, as Fastify's does. */
const parsed = (raw: string) => ({ ...parseQueryString(raw) });

describe('parseQueryString', () => {
  it('drops the empty parameters a Go client sends, keeping the others', () => {
    expect(parsed('cursor=&limit=100&recipient=&status=')).toEqual({ limit: '100' });
    expect(parsed('domain=&limit=50')).toEqual({ limit: '50' });
    expect(parsed('dns_valid')).toEqual({});
    expect(parsed('')).toEqual({});
  });

  it('decodes like Fastify: percent escapes, + as a space, = inside a value', () => {
    expect(parsed('email=a%2Bb%40example.test&subject=two+words&q=a=b')).toEqual({
      email: 'a+b@example.test',
      subject: 'two words',
      q: 'a=b',
    });
    expect(parsed('a=%ZZ&b=%')).toEqual({ a: '%ZZ', b: '%' });
    expect(parsed('&&a=1&')).toEqual({ a: '1' });
  });

  it('keeps a repeated parameter as an array, without its empty occurrences', () => {
    expect(parsed('status=a&status=b')).toEqual({ status: ['a', 'b'] });
    expect(parsed('status=&status=b')).toEqual({ status: 'b' });
    expect(parsed('status=&status=')).toEqual({});
  });

  it('treats prototype names as ordinary parameters', () => {
    const query = parseQueryString('__proto__=x&constructor=y&toString=');
    expect(Object.getPrototypeOf(query)).toBeNull();
    expect({ ...query }).toEqual({ ['__proto__']: 'x', constructor: 'y' });
  });

  it('does not limit the number of parameters', () => {
    const raw = Array.from({ length: 1_500 }, (_, i) => `p${i}=${i}`).join('&');
    expect(Object.keys(parseQueryString(raw))).toHaveLength(1_500);
  });
});
