import { hasEightBitBytes } from './smtp-pool';

describe('hasEightBitBytes', () => {
  it('finds a byte over 127 anywhere in the message', () => {
    expect(hasEightBitBytes(Buffer.from('Subject: hi\r\n\r\nplain\r\n'))).toBe(false);
    expect(hasEightBitBytes(Buffer.from('Subject: hi\r\n\r\ncafé\r\n', 'utf8'))).toBe(true);
    expect(hasEightBitBytes(Buffer.from([0x41, 0x80]))).toBe(true);
    expect(hasEightBitBytes(Buffer.from([0x7f]))).toBe(false);
    expect(hasEightBitBytes(Buffer.alloc(0))).toBe(false);
  });
});
