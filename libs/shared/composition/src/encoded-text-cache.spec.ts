import { EncodedTextCache } from './encoded-text-cache';

/** An encoder that counts its calls. */
function countingEncoder() {
  const calls: string[] = [];
  const encode = (text: string) => {
    calls.push(text);
    return Buffer.from(`<${text}>`);
  };
  return { calls, encode };
}

describe('encoded text cache', () => {
  it('encodes a text once per encoding, then gives the bytes it kept', () => {
    const cache = new EncodedTextCache({ maxEntries: 10, maxTextLength: 1_000 });
    const { calls, encode } = countingEncoder();

    const first = cache.encoded('quoted-printable', 'hello', encode);
    const again = cache.encoded('quoted-printable', 'hello', encode);
    const base64 = cache.encoded('base64', 'hello', encode);

    expect(first.toString()).toBe('<hello>');
    expect(again).toBe(first);
    expect(base64).not.toBe(first);
    expect(calls).toEqual(['hello', 'hello']);
    expect(cache.size).toBe(2);
  });

  it('never keeps a text longer than its whole budget', () => {
    const cache = new EncodedTextCache({ maxEntries: 10, maxTextLength: 4 });
    const { calls, encode } = countingEncoder();

    cache.encoded('7bit', 'too long', encode);
    cache.encoded('7bit', 'too long', encode);

    expect(calls).toEqual(['too long', 'too long']);
    expect(cache.size).toBe(0);
  });

  it('starts over when the next text would go over a limit', () => {
    const cache = new EncodedTextCache({ maxEntries: 2, maxTextLength: 10 });
    const { calls, encode } = countingEncoder();

    cache.encoded('7bit', 'a', encode);
    cache.encoded('7bit', 'b', encode);
    cache.encoded('7bit', 'c', encode);
    expect(cache.size).toBe(1);
    cache.encoded('7bit', 'c', encode);
    cache.encoded('7bit', 'a', encode);
    expect(calls).toEqual(['a', 'b', 'c', 'a']);

    cache.encoded('7bit', '123456789', encode);
    expect(cache.size).toBe(1);
  });
});
