import ipaddr from 'ipaddr.js';

import {
  CANONICAL_IP_CACHE_SIZE,
  canonicalIp,
  canonicalizeAllowList,
  IP_ALLOW_LIST_MAX,
  IpAllowListError,
  isIpAllowed,
  parseClientIp,
} from './ip-allow-list';

describe('canonicalizeAllowList', () => {
  it('turns a bare IPv4 address into a /32', () => {
    expect(canonicalizeAllowList(['192.0.2.1'])).toEqual(['192.0.2.1/32']);
  });

  it('turns a bare IPv6 address into a compressed /128', () => {
    expect(canonicalizeAllowList(['2001:0db8:0000:0000:0000:0000:0000:0001'])).toEqual([
      '2001:db8::1/128',
    ]);
    expect(canonicalizeAllowList(['2001:DB8::A'])).toEqual(['2001:db8::a/128']);
  });

  it('masks host bits', () => {
    expect(canonicalizeAllowList(['10.1.2.3/8'])).toEqual(['10.0.0.0/8']);
    expect(canonicalizeAllowList(['192.168.1.77/24'])).toEqual(['192.168.1.0/24']);
    expect(canonicalizeAllowList(['2001:db8::1/32'])).toEqual(['2001:db8::/32']);
    expect(canonicalizeAllowList(['2001:db8:abcd:12::7/48'])).toEqual(['2001:db8:abcd::/48']);
  });

  it('keeps already canonical CIDRs, including the narrowest and widest allowed prefixes', () => {
    expect(
      canonicalizeAllowList(['10.0.0.0/8', '128.0.0.0/1', '1.2.3.4/32', '8000::/1', '::1/128']),
    ).toEqual(['10.0.0.0/8', '128.0.0.0/1', '1.2.3.4/32', '8000::/1', '::1/128']);
  });

  it('turns IPv4-mapped IPv6 into plain IPv4', () => {
    expect(canonicalizeAllowList(['::ffff:1.2.3.4'])).toEqual(['1.2.3.4/32']);
    expect(canonicalizeAllowList(['::ffff:10.0.0.0/104'])).toEqual(['10.0.0.0/8']);
    expect(canonicalizeAllowList(['::ffff:1.2.3.4/128'])).toEqual(['1.2.3.4/32']);
  });

  it('rejects an IPv4-mapped prefix of /96, which allows every IPv4 address', () => {
    expect(() => canonicalizeAllowList(['::ffff:0.0.0.0/96'])).toThrow(IpAllowListError);
  });

  it('trims whitespace', () => {
    expect(canonicalizeAllowList(['  10.0.0.1 ', '\t2001:db8::/32\n'])).toEqual([
      '10.0.0.1/32',
      '2001:db8::/32',
    ]);
  });

  it('removes duplicates, including equivalents written differently, in first-seen order', () => {
    expect(
      canonicalizeAllowList([
        '10.0.0.1',
        '192.168.0.0/16',
        '10.0.0.1/32',
        '::ffff:10.0.0.1',
        '192.168.7.7/16',
        '2001:db8::1',
        '2001:0DB8:0:0::1/128',
        '10.0.0.1',
      ]),
    ).toEqual(['10.0.0.1/32', '192.168.0.0/16', '2001:db8::1/128']);
  });

  it('accepts an empty list', () => {
    expect(canonicalizeAllowList([])).toEqual([]);
  });

  it.each(['0.0.0.0/0', '::/0', '10.0.0.0/0', '2001:db8::/0'])(
    'rejects %j because it allows every address',
    (entry) => {
      expect(() => canonicalizeAllowList([entry])).toThrow(IpAllowListError);
      expect(() => canonicalizeAllowList([entry])).toThrow(/allows every address/);
    },
  );

  it.each([
    ['two IPv4 halves', ['0.0.0.0/1', '128.0.0.0/1'], 'IPv4'],
    ['two IPv6 halves', ['::/1', '8000::/1'], 'IPv6'],
    [
      'two IPv4 halves written as IPv4-mapped IPv6',
      ['::ffff:0.0.0.0/97', '::ffff:128.0.0.0/97'],
      'IPv4',
    ],
    ['halves with host bits and bare addresses', ['1.2.3.4/1', '200.1.1.1/1', '10.0.0.1'], 'IPv4'],
    [
      'a /0 in one family beside a narrow entry of the other',
      ['2001:db8::/32', '0.0.0.0/0'],
      'IPv4',
    ],
    [
      'every IPv4 /8 (more entries than allowed, too)',
      Array.from({ length: 256 }, (_, octet) => `${octet}.0.0.0/8`),
      'IPv4',
    ],
  ])('rejects %s because together they allow every address', (_, entries, family) => {
    expect(() => canonicalizeAllowList(entries)).toThrow(IpAllowListError);
    expect(() => canonicalizeAllowList(entries)).toThrow(
      `ip_allow_list allows every address and is not permitted: its entries cover all of ${family}`,
    );
  });

  it('accepts halves of both families that leave addresses out', () => {
    expect(canonicalizeAllowList(['0.0.0.0/1', '128.0.0.0/2', '::/1', '8000::/2'])).toEqual([
      '0.0.0.0/1',
      '128.0.0.0/2',
      '::/1',
      '8000::/2',
    ]);
  });

  it.each([
    '1.2.3.4/33',
    '::1/129',
    '1.2.3.4/1000',
    'abc',
    '',
    '   ',
    '1.2.3.4/',
    '/24',
    '1.2.3.4/abc',
    '1.2.3.4/-1',
    '1.2.3.4/+8',
    '1.2.3.4/ 8',
    '256.0.0.1',
    '1.2.3.4.5',
    '1.2.3.4 /8',
    '2001:db8:::1',
    'example.com',
  ])('rejects the malformed entry %j', (entry) => {
    expect(() => canonicalizeAllowList([entry])).toThrow(IpAllowListError);
  });

  it('names the offending entry', () => {
    expect(() => canonicalizeAllowList(['10.0.0.1', 'nope'])).toThrow(/nope/);
  });

  it('rejects a CIDR with more than one slash', () => {
    expect(() => canonicalizeAllowList(['1.2.3.4/8/9'])).toThrow(IpAllowListError);
    expect(() => canonicalizeAllowList(['2001:db8::/32/64'])).toThrow(IpAllowListError);
  });

  it.each(['1', '10.1', '0x0a.0.0.1', '012.0.0.1', '4294967295', '012.0.0.0/8'])(
    'rejects the non-dotted-quad IPv4 form %j instead of reinterpreting it',
    (entry) => {
      expect(() => canonicalizeAllowList([entry])).toThrow(IpAllowListError);
    },
  );

  it(`accepts ${IP_ALLOW_LIST_MAX} distinct entries`, () => {
    const entries = Array.from({ length: IP_ALLOW_LIST_MAX }, (_, i) => `10.0.${i}.1`);
    const canonical = canonicalizeAllowList(entries);
    expect(canonical).toHaveLength(IP_ALLOW_LIST_MAX);
    expect(canonical[0]).toBe('10.0.0.1/32');
    expect(canonical[IP_ALLOW_LIST_MAX - 1]).toBe(`10.0.${IP_ALLOW_LIST_MAX - 1}.1/32`);
  });

  it(`rejects ${IP_ALLOW_LIST_MAX + 1} distinct entries`, () => {
    const entries = Array.from({ length: IP_ALLOW_LIST_MAX + 1 }, (_, i) => `10.0.${i}.1`);
    expect(() => canonicalizeAllowList(entries)).toThrow(IpAllowListError);
    expect(() => canonicalizeAllowList(entries)).toThrow(/at most 100/);
  });

  it('counts the limit after de-duplication', () => {
    const distinct = Array.from({ length: IP_ALLOW_LIST_MAX }, (_, i) => `10.0.${i}.1`);
    const withDuplicates = [...distinct, ...distinct.map((ip) => `${ip}/32`)];
    expect(canonicalizeAllowList(withDuplicates)).toHaveLength(IP_ALLOW_LIST_MAX);
  });
});

describe('isIpAllowed', () => {
  it('allows everyone when the list is empty', () => {
    expect(isIpAllowed('192.0.2.1', [])).toBe(true);
    expect(isIpAllowed('2001:db8::1', [])).toBe(true);
    expect(isIpAllowed('not an ip', [])).toBe(true);
  });

  it('matches IPv4 addresses against IPv4 CIDRs', () => {
    const list = ['10.0.0.0/8', '192.0.2.7/32'];
    expect(isIpAllowed('10.255.1.2', list)).toBe(true);
    expect(isIpAllowed('192.0.2.7', list)).toBe(true);
    expect(isIpAllowed('192.0.2.8', list)).toBe(false);
    expect(isIpAllowed('11.0.0.1', list)).toBe(false);
  });

  it('matches IPv6 addresses against IPv6 CIDRs', () => {
    const list = ['2001:db8::/32'];
    expect(isIpAllowed('2001:db8:1234::1', list)).toBe(true);
    expect(isIpAllowed('2001:DB8::ABCD', list)).toBe(true);
    expect(isIpAllowed('2001:db9::1', list)).toBe(false);
    expect(isIpAllowed('::1', list)).toBe(false);
  });

  it('matches an IPv4-mapped IPv6 client against IPv4 CIDRs', () => {
    expect(isIpAllowed('::ffff:127.0.0.1', ['127.0.0.1/32'])).toBe(true);
    expect(isIpAllowed('::ffff:10.1.2.3', ['10.0.0.0/8'])).toBe(true);
    expect(isIpAllowed('::ffff:11.1.2.3', ['10.0.0.0/8'])).toBe(false);
  });

  it('accepts bracketed and zoned client addresses', () => {
    expect(isIpAllowed('[2001:db8::1]', ['2001:db8::/32'])).toBe(true);
    expect(isIpAllowed('fe80::1%eth0', ['fe80::/10'])).toBe(true);
  });

  it('denies a client address that is not an IP', () => {
    expect(isIpAllowed('garbage', ['10.0.0.0/8'])).toBe(false);
    expect(isIpAllowed('', ['10.0.0.0/8'])).toBe(false);
    expect(isIpAllowed('10.0.0.256', ['10.0.0.0/8'])).toBe(false);
  });

  it('never matches across address families', () => {
    expect(isIpAllowed('10.0.0.1', ['::/1', '8000::/1'])).toBe(false);
    expect(isIpAllowed('2001:db8::1', ['0.0.0.0/1', '128.0.0.0/1'])).toBe(false);
  });

  it('works on the output of canonicalizeAllowList', () => {
    const list = canonicalizeAllowList(['::ffff:10.0.0.0/104', '2001:db8::1/32', '192.0.2.9']);
    expect(isIpAllowed('10.9.9.9', list)).toBe(true);
    expect(isIpAllowed('2001:db8:ffff::', list)).toBe(true);
    expect(isIpAllowed('192.0.2.9', list)).toBe(true);
    expect(isIpAllowed('192.0.2.10', list)).toBe(false);
  });
});

describe('canonicalIp', () => {
  it.each([
    ['192.0.2.1', '192.0.2.1'],
    [' 192.0.2.1 ', '192.0.2.1'],
    ['::ffff:192.0.2.1', '192.0.2.1'],
    ['2001:0DB8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
    ['[2001:db8::1]', '2001:db8::1'],
    ['fe80::1%eth0', 'fe80::1'],
    ['::1', '::1'],
  ])('writes %j as %j', (raw, canonical) => {
    expect(canonicalIp(raw)).toBe(canonical);
  });

  it.each(['', 'garbage', '10.0.0.256', '2001:db8:::1', 'example.com'])(
    'answers null for %j',
    (raw) => {
      expect(canonicalIp(raw)).toBeNull();
    },
  );

  it('parses an address once, then answers from memory', () => {
    const parse = jest.spyOn(ipaddr, 'parse');
    try {
      expect(canonicalIp('198.51.100.7')).toBe('198.51.100.7');
      expect(canonicalIp('198.51.100.7')).toBe('198.51.100.7');
      expect(canonicalIp('not an address')).toBeNull();
      expect(canonicalIp('not an address')).toBeNull();
      expect(parse).toHaveBeenCalledTimes(1);
    } finally {
      parse.mockRestore();
    }
  });

  it('still answers right once it has seen more addresses than it remembers', () => {
    for (let index = 0; index <= CANONICAL_IP_CACHE_SIZE; index++) {
      const raw = `::ffff:10.${(index >> 16) & 255}.${(index >> 8) & 255}.${index & 255}`;
      expect(canonicalIp(raw)).toBe(
        `10.${(index >> 16) & 255}.${(index >> 8) & 255}.${index & 255}`,
      );
    }
    expect(canonicalIp('2001:0db8::0001')).toBe('2001:db8::1');
  });

  it('parseClientIp answers the address kind after unmapping', () => {
    expect(parseClientIp('::ffff:1.2.3.4')?.kind()).toBe('ipv4');
    expect(parseClientIp('2001:db8::1')?.kind()).toBe('ipv6');
    expect(parseClientIp('nope')).toBeNull();
  });
});
