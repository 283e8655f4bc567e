import { hasOverlongLine, hasOverlongTextLine, MAX_LINE_OCTETS } from './line-length';

describe('hasOverlongLine', () => {
  const line = (octets: number) => 'a'.repeat(octets);

  it.each([
    ['nothing', ''],
    ['998 octets', line(998)],
    ['998 octets then CRLF', `${line(998)}\r\n${line(998)}\r\n`],
    ['lines ended by a lone CR or LF', `${line(998)}\r${line(998)}\n${line(998)}`],
  ])('is false for %s', (_case, text) => {
    expect(hasOverlongLine(Buffer.from(text, 'latin1'))).toBe(false);
  });

  it.each([
    ['999 octets', line(999)],
    ['a last line of 999 octets', `x\r\n${line(999)}`],
    ['999 octets before CRLF', `${line(999)}\r\n`],
  ])('is true for %s', (_case, text) => {
    expect(hasOverlongLine(Buffer.from(text, 'latin1'))).toBe(true);
  });
});

describe('hasOverlongTextLine', () => {
  it('counts octets, not characters', () => {
    expect(MAX_LINE_OCTETS).toBe(998);
    expect(hasOverlongTextLine('é'.repeat(499))).toBe(false);
    expect(hasOverlongTextLine('é'.repeat(500))).toBe(true);
    expect(hasOverlongTextLine(`${'é'.repeat(499)}\r\n ${'a'.repeat(997)}`)).toBe(false);
  });
});
