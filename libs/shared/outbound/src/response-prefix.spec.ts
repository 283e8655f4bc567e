import { printablePrefix } from './response-prefix';

describe('printablePrefix', () => {
  it('keeps printable text, tabs and line feeds, and drops control characters', () => {
    expect(printablePrefix(Buffer.from('ok\tdone\r\n\u0000\u001b[31mred\u007f é'))).toBe(
      'ok\tdone\n[31mred é',
    );
  });

  it('keeps the first 1 KB and drops a character cut in two', () => {
    const text = `${'a'.repeat(1023)}é and more`;
    expect(printablePrefix(Buffer.from(text))).toBe('a'.repeat(1023));
    expect(printablePrefix(Buffer.from('b'.repeat(5000)))).toHaveLength(1024);
  });
});
