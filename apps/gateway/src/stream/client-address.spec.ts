import { clientAddress } from './client-address';

describe('clientAddress', () => {
  it('is the peer without trusted proxies, whatever X-Forwarded-For says', () => {
    expect(clientAddress('::ffff:127.0.0.1', '203.0.113.9', [])).toBe('127.0.0.1');
  });

  it('follows X-Forwarded-For from the right through trusted proxies only', () => {
    const trusted = ['10.0.0.0/8'];
    expect(clientAddress('10.0.0.2', '198.51.100.7, 203.0.113.9, 10.0.0.3', trusted)).toBe(
      '203.0.113.9',
    );
    expect(clientAddress('192.0.2.1', '203.0.113.9', trusted)).toBe('192.0.2.1');
  });
});
