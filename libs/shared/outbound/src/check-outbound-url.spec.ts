import { checkOutboundUrl } from './check-outbound-url';
import { outboundPolicyOf } from './outbound-policy';

const production = outboundPolicyOf({ OUTBOUND_ALLOW_HTTP: false, OUTBOUND_ALLOW_CIDRS: '' });
const development = outboundPolicyOf({
  OUTBOUND_ALLOW_HTTP: true,
  OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8,::1/128',
});

function reasonOf(url: string, policy = production): string | null {
  const checked = checkOutboundUrl(url, policy);
  return checked.ok ? null : checked.reason;
}

describe('checkOutboundUrl', () => {
  it.each([
    ['https://127.0.0.1/hook', '127.0.0.1 is a loopback address'],
    ['https://127.255.255.254/hook', '127.255.255.254 is a loopback address'],
    ['https://localhost/hook', 'localhost is a loopback name'],
    ['https://LOCALHOST./hook', 'localhost. is a loopback name'],
    ['https://api.localhost/hook', 'api.localhost is a loopback name'],
    ['https://0.0.0.0/hook', '0.0.0.0 is a unspecified address'],
    ['https://[::1]/hook', '::1 is a loopback address'],
    ['https://[::]/hook', ':: is a unspecified address'],
    ['https://10.1.2.3/hook', '10.1.2.3 is a private address'],
    ['https://172.16.0.1/hook', '172.16.0.1 is a private address'],
    ['https://172.31.255.255/hook', '172.31.255.255 is a private address'],
    ['https://192.168.1.1/hook', '192.168.1.1 is a private address'],
    ['https://100.64.0.1/hook', '100.64.0.1 is a carrierGradeNat address'],
    ['https://100.127.255.255/hook', '100.127.255.255 is a carrierGradeNat address'],
    ['https://169.254.169.254/latest', '169.254.169.254 is a linkLocal address'],
    ['https://[fc00::1]/hook', 'fc00::1 is a uniqueLocal address'],
    ['https://[fdff:ffff::1]/hook', 'fdff:ffff::1 is a uniqueLocal address'],
    ['https://[fe80::1]/hook', 'fe80::1 is a linkLocal address'],
    ['https://[febf::1]/hook', 'febf::1 is a linkLocal address'],
    ['https://[::ffff:127.0.0.1]/hook', '127.0.0.1 is a loopback address'],
    ['https://[::ffff:10.0.0.1]/hook', '10.0.0.1 is a private address'],
    ['https://2130706433/hook', '127.0.0.1 is a loopback address'],
    ['https://0177.0.0.1/hook', '127.0.0.1 is a loopback address'],
    ['https://0x7f000001/hook', '127.0.0.1 is a loopback address'],
    ['https://0x7f.1/hook', '127.0.0.1 is a loopback address'],
    ['https://127.1/hook', '127.0.0.1 is a loopback address'],
    ['https://[64:ff9b::7f00:1]/hook', '64:ff9b::7f00:1 is a rfc6052 address'],
    ['https://[2002:7f00:1::]/hook', '2002:7f00:1:: is a 6to4 address'],
    ['https://224.0.0.1/hook', '224.0.0.1 is a multicast address'],
  ])('refuses %s', (url, reason) => {
    expect(reasonOf(url)).toBe(`url host ${reason}, which outbound requests may not reach`);
  });

  it.each([
    'https://example.com/hook',
    'https://hooks.example.com:8443/path?x=1',
    'https://93.184.215.14/hook',
    'https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/hook',
    'https://172.32.0.1/hook',
    'https://100.128.0.1/hook',
    'https://example.com:80/hook',
  ])('accepts %s', (url) => {
    expect(reasonOf(url)).toBeNull();
  });

  it('refuses what is not an absolute URL', () => {
    expect(reasonOf('/hook')).toBe('url must be an absolute URL');
    expect(reasonOf('not a url')).toBe('url must be an absolute URL');
  });

  it('refuses http unless the policy allows it, and every other scheme', () => {
    expect(reasonOf('http://example.com/hook')).toBe('url must use https');
    expect(reasonOf('http://example.com/hook', development)).toBeNull();
    expect(reasonOf('ftp://example.com/hook', development)).toBe('url must use https or http');
    expect(reasonOf('file:///etc/passwd')).toBe('url must use https');
  });

  it('refuses user info', () => {
    expect(reasonOf('https://user@example.com/hook')).toBe(
      'url must not contain a user name or password',
    );
    expect(reasonOf('https://user:secret@example.com/hook')).toBe(
      'url must not contain a user name or password',
    );
  });

  it('accepts 80, 443 and unprivileged ports only', () => {
    expect(reasonOf('https://example.com:25/hook')).toBe(
      'url port 25 is not allowed: use 80, 443 or a port from 1024 to 65535',
    );
    expect(reasonOf('https://example.com:1023/hook')).toMatch(/port 1023 is not allowed/);
    expect(reasonOf('https://example.com:1024/hook')).toBeNull();
    expect(reasonOf('https://example.com:65535/hook')).toBeNull();
  });

  it('accepts loopback targets an allowed CIDR covers, and only those', () => {
    expect(reasonOf('http://127.0.0.1:8080/hook', development)).toBeNull();
    expect(reasonOf('http://localhost:8080/hook', development)).toBeNull();
    expect(reasonOf('http://[::1]:8080/hook', development)).toBeNull();
    expect(reasonOf('http://[::ffff:127.0.0.1]:8080/hook', development)).toBeNull();
    expect(reasonOf('http://2130706433:8080/hook', development)).toBeNull();
    expect(reasonOf('http://10.0.0.1:8080/hook', development)).toMatch(/private address/);
    expect(reasonOf('http://169.254.169.254/hook', development)).toMatch(/linkLocal address/);
  });
});
