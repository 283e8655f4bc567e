import { allowsClientIp } from './ip-allow-list';

describe('allowsClientIp', () => {
  it('allows every address when the list is empty', () => {
    expect(allowsClientIp({ ip_allow_list: [] }, '203.0.113.7')).toBe(true);
  });

  it('allows only listed addresses and ranges', () => {
    const credential = { ip_allow_list: ['192.0.2.0/24', '2001:db8::1/128'] };
    expect(allowsClientIp(credential, '192.0.2.55')).toBe(true);
    expect(allowsClientIp(credential, '2001:db8::1')).toBe(true);
    expect(allowsClientIp(credential, '198.51.100.1')).toBe(false);
    expect(allowsClientIp(credential, 'not-an-ip')).toBe(false);
  });
});
