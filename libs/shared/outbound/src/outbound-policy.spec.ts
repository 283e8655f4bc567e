import { blockedAddressReason, outboundPolicyOf } from './outbound-policy';

describe('outboundPolicyOf', () => {
  it('reads the settings, canonicalising the CIDR list', () => {
    expect(
      outboundPolicyOf({ OUTBOUND_ALLOW_HTTP: true, OUTBOUND_ALLOW_CIDRS: ' 127.0.0.1/8 , ::1 ' }),
    ).toEqual({ allowHttp: true, allowCidrs: ['127.0.0.0/8', '::1/128'] });
    expect(outboundPolicyOf({ OUTBOUND_ALLOW_HTTP: false, OUTBOUND_ALLOW_CIDRS: '' })).toEqual({
      allowHttp: false,
      allowCidrs: [],
    });
  });

  it('refuses a list that is not CIDRs or that allows everything', () => {
    const policy = (cidrs: string) =>
      outboundPolicyOf({ OUTBOUND_ALLOW_HTTP: false, OUTBOUND_ALLOW_CIDRS: cidrs });
    expect(() => policy('localhost')).toThrow(/invalid/);
    expect(() => policy('0.0.0.0/0')).toThrow(/allows every address/);
  });
});

describe('blockedAddressReason', () => {
  const policy = { allowHttp: false, allowCidrs: ['10.20.0.0/16'] };

  it('allows public unicast addresses and the allowed CIDRs', () => {
    expect(blockedAddressReason('8.8.8.8', policy)).toBeNull();
    expect(blockedAddressReason('2001:4860:4860::8888', policy)).toBeNull();
    expect(blockedAddressReason('10.20.3.4', policy)).toBeNull();
    expect(blockedAddressReason('::ffff:10.20.3.4', policy)).toBeNull();
  });

  it('refuses the rest of the private space and what is not an address', () => {
    expect(blockedAddressReason('10.21.0.1', policy)).toMatch(/private address/);
    expect(blockedAddressReason('255.255.255.255', policy)).toMatch(/broadcast address/);
    expect(blockedAddressReason('example.com', policy)).toBe('example.com is not an IP address');
  });
});
