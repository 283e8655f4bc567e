import ipaddr from 'ipaddr.js';

export type AddressFamily = 'ipv4' | 'ipv6';

const FAMILY_BITS: Record<AddressFamily, number> = { ipv4: 32, ipv6: 128 };

/** An inclusive range of addresses, as integers. */
interface AddressRange {
  first: bigint;
  last: bigint;
}

/**
 * IPv6 addresses that never meet an IPv6 entry: clients written as IPv4-mapped IPv6
 * (`::ffff:a.b.c.d`) are matched as IPv4, so a list covers every IPv6 client without them.
 */
const IPV6_RANGES_MATCHED_AS_IPV4: readonly string[] = ['::ffff:0:0/96'];

function toInteger(address: ipaddr.IPv4 | ipaddr.IPv6): bigint {
  return address.toByteArray().reduce((value, byte) => (value << 8n) | BigInt(byte), 0n);
}

function cidrRange(cidr: string): { family: AddressFamily; range: AddressRange } {
  const [network, prefix] = ipaddr.parseCIDR(cidr);
  const family = network.kind();
  const hostBits = BigInt(FAMILY_BITS[family] - prefix);
  const first = (toInteger(network) >> hostBits) << hostBits;
  return { family, range: { first, last: first + (1n << hostBits) - 1n } };
}

function coversWholeSpace(ranges: AddressRange[], bits: number): boolean {
  const sorted = [...ranges].sort((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : 0));
  let nextUncovered = 0n;
  for (const range of sorted) {
    if (range.first > nextUncovered) return false;
    if (range.last >= nextUncovered) nextUncovered = range.last + 1n;
  }
  return nextUncovered === 1n << BigInt(bits);
}

/**
 * The address families whose every client address the union of these CIDRs matches, whatever
 * the prefixes, overlaps or order (`0.0.0.0/1` with `128.0.0.0/1` covers all of IPv4).
 */
export function familiesFullyCovered(cidrs: readonly string[]): AddressFamily[] {
  const ranges: Record<AddressFamily, AddressRange[]> = {
    ipv4: [],
    ipv6: IPV6_RANGES_MATCHED_AS_IPV4.map((cidr) => cidrRange(cidr).range),
  };
  for (const cidr of cidrs) {
    const { family, range } = cidrRange(cidr);
    ranges[family].push(range);
  }
  return (['ipv4', 'ipv6'] as const).filter((family) =>
    coversWholeSpace(ranges[family], FAMILY_BITS[family]),
  );
}
