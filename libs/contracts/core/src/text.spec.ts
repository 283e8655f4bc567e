import { printable } from './text';

describe('printable', () => {
  it('turns each run of control characters into one space and keeps tabs', () => {
    expect(printable('250 ok\u0000\u0001\tid\r\nnext\u007f')).toBe('250 ok \tid next ');
    expect(printable('plain text')).toBe('plain text');
  });
});
