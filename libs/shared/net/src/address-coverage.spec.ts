import { familiesFullyCovered } from './address-coverage';

/** The 256 IPv4 /8 networks. */
const ALL_SLASH_8S = Array.from({ length: 256 }, (_, octet) => `${octet}.0.0.0/8`);

describe('familiesFullyCovered', () => {
  it('finds nothing covered in an empty list', () => {
    expect(familiesFullyCovered([])).toEqual([]);
  });

  it.each([
    ['one /0', ['0.0.0.0/0']],
    ['two halves', ['0.0.0.0/1', '128.0.0.0/1']],
    ['two halves in reverse order', ['128.0.0.0/1', '0.0.0.0/1']],
    ['every /8', ALL_SLASH_8S],
    ['overlapping ranges', ['0.0.0.0/1', '64.0.0.0/2', '128.0.0.0/2', '128.0.0.0/1']],
    ['a /0 beside narrower entries', ['10.0.0.0/8', '0.0.0.0/0', '192.0.2.1/32']],
    ['adjacent ranges of mixed sizes', ['0.0.0.0/2', '64.0.0.0/2', '128.0.0.0/2', '192.0.0.0/2']],
    ['duplicates', ['0.0.0.0/1', '0.0.0.0/1', '128.0.0.0/1', '128.0.0.0/1']],
    ['single addresses completing the rest', [...everyIpv4AddressBut(0x0a000001n), '10.0.0.1/32']],
  ])('finds IPv4 covered by %s', (_, cidrs) => {
    expect(familiesFullyCovered(cidrs)).toEqual(['ipv4']);
  });

  it.each([
    ['one half', ['0.0.0.0/1']],
    ['every /8 but one', ALL_SLASH_8S.filter((cidr) => cidr !== '77.0.0.0/8')],
    ['every address but the first', everyIpv4AddressBut(0n)],
    ['every address but the last', everyIpv4AddressBut(0xffffffffn)],
    ['every address but one in the middle', everyIpv4AddressBut(0x0a000001n)],
    ['a gap between overlapping ranges', ['0.0.0.0/2', '0.0.0.0/3', '128.0.0.0/1']],
    ['single addresses only', ['0.0.0.0/32', '255.255.255.255/32']],
  ])('does not find IPv4 covered by %s', (_, cidrs) => {
    expect(familiesFullyCovered(cidrs)).toEqual([]);
  });

  it.each([
    ['one /0', ['::/0']],
    ['two halves', ['::/1', '8000::/1']],
    ['every /1 with duplicates and overlaps', ['8000::/1', '::/2', '::/1', '8000::/1']],
  ])('finds IPv6 covered by %s', (_, cidrs) => {
    expect(familiesFullyCovered(cidrs)).toEqual(['ipv6']);
  });

  it('counts IPv6 as covered when only the IPv4-mapped range is left out', () => {
    // IPv4-mapped clients are matched as IPv4, so these entries match every IPv6 client.
    expect(familiesFullyCovered(complementOfMappedRange())).toEqual(['ipv6']);
  });

  it('does not count IPv6 as covered when an ordinary range is left out', () => {
    // ::fffe:0:0/96 narrowed to its lower half leaves ::fffe:8000:0/97 out.
    const withAGap = complementOfMappedRange().map((cidr) =>
      cidr.endsWith('/96') ? cidr.replace(/\/96$/, '/97') : cidr,
    );
    expect(withAGap).toContain('0:0:0:0:0:fffe:0:0/97');
    expect(familiesFullyCovered(withAGap)).toEqual([]);
  });

  it('keeps the families apart', () => {
    expect(familiesFullyCovered(['0.0.0.0/1', '8000::/1'])).toEqual([]);
    expect(familiesFullyCovered(['0.0.0.0/1', '128.0.0.0/1', '::/1'])).toEqual(['ipv4']);
    expect(familiesFullyCovered(['0.0.0.0/0', '::/0'])).toEqual(['ipv4', 'ipv6']);
  });
});

/**
 * The CIDRs covering every address of a `bits`-wide family except the network `value/prefix`:
 * at each prefix length, the sibling of the network's ancestor.
 */
function complementOf(value: bigint, prefix: number, bits: number): bigint[][] {
  return Array.from({ length: prefix }, (_, index) => {
    const hostBits = BigInt(bits - index - 1);
    return [((value >> hostBits) ^ 1n) << hostBits, BigInt(index + 1)];
  });
}

/** The 32 CIDRs covering every IPv4 address but one. */
function everyIpv4AddressBut(address: bigint): string[] {
  return complementOf(address, 32, 32).map(([value, prefix]) => {
    const octets = [24n, 16n, 8n, 0n].map((shift) => (value >> shift) & 255n);
    return `${octets.join('.')}/${prefix}`;
  });
}

/** Every IPv6 address but `::ffff:0:0/96`. */
function complementOfMappedRange(): string[] {
  return complementOf(0xffffn << 32n, 96, 128).map(([value, prefix]) => {
    const groups = Array.from({ length: 8 }, (_, index) =>
      ((value >> BigInt(112 - 16 * index)) & 0xffffn).toString(16),
    );
    return `${groups.join(':')}/${prefix}`;
  });
}
