import ipaddr from 'ipaddr.js';

import { type AddressFamily, familiesFullyCovered } from './address-coverage';

export const IP_ALLOW_LIST_MAX = 100;

export class IpAllowListError extends Error {}

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** IPv4-mapped IPv6 (`::ffff:1.2.3.4`) becomes plain IPv4; everything else is kept. */
function unmap(address: Address): Address {
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
    return (address as ipaddr.IPv6).toIPv4Address();
  }
  return address;
}

/** Parses a client address as seen by a socket; null when it is not an IP address. */
export function parseClientIp(raw: string): Address | null {
  const trimmed = raw.trim().replace(/^\[|\]$/g, '');
  const withoutZone = trimmed.split('%')[0];
  if (!ipaddr.isValid(withoutZone)) return null;
  return unmap(ipaddr.parse(withoutZone));
}

/** How many raw addresses canonicalIp remembers; it forgets them all when full. */
export const CANONICAL_IP_CACHE_SIZE = 4_096;
const canonicalIps = new Map<string, string | null>();

/**
 * Canonical textual form of an IP address (IPv4 dotted, IPv6 RFC 5952). Remembered per raw form:
 * every request asks it of its client's address, and ipaddr.js's parsing is not cheap.
 */
export function canonicalIp(raw: string): string | null {
  const known = canonicalIps.get(raw);
  if (known !== undefined) return known;
  const canonical = parseClientIp(raw)?.toString() ?? null;
  if (canonicalIps.size >= CANONICAL_IP_CACHE_SIZE) canonicalIps.clear();
  canonicalIps.set(raw, canonical);
  return canonical;
}

/**
 * Strict address syntax: IPv4 only as four decimal parts (no octal, hex or short forms, which
 * would silently name another address), IPv6 without a zone.
 */
function parseStrictAddress(text: string): Address | null {
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.IPv4.parse(text);
  if (text.includes(':') && !text.includes('%') && ipaddr.IPv6.isValid(text)) {
    return ipaddr.IPv6.parse(text);
  }
  return null;
}

function canonicalEntry(raw: string): string {
  const invalid = () => new IpAllowListError(`invalid ip_allow_list entry: ${raw}`);
  const parts = raw.trim().split('/');
  if (parts.length > 2) throw invalid();
  const [addressPart, prefixPart] = parts;
  const parsed = parseStrictAddress(addressPart);
  if (!parsed) throw invalid();
  let address: Address = parsed;
  let prefix = parsed.kind() === 'ipv4' ? 32 : 128;
  if (prefixPart !== undefined) {
    if (!/^[0-9]{1,3}$/.test(prefixPart)) throw invalid();
    prefix = Number(prefixPart);
    if (prefix > (parsed.kind() === 'ipv4' ? 32 : 128)) throw invalid();
  }
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress() && prefix >= 96) {
    address = (parsed as ipaddr.IPv6).toIPv4Address();
    prefix -= 96;
  }
  const network =
    address.kind() === 'ipv4'
      ? ipaddr.IPv4.networkAddressFromCIDR(`${address.toString()}/${prefix}`)
      : ipaddr.IPv6.networkAddressFromCIDR(`${address.toString()}/${prefix}`);
  return `${network.toString()}/${prefix}`;
}

const FAMILY_NAMES: Record<AddressFamily, string> = { ipv4: 'IPv4', ipv6: 'IPv6' };

/**
 * Canonicalises an allow list (spec 5.7): CIDRs or bare addresses (as /32 or /128), host bits
 * masked, duplicates removed in first-seen order, at most 100. A list allowing every address of
 * a family is rejected, whether one `/0` or several entries together do it.
 */
export function canonicalizeAllowList(entries: readonly string[]): string[] {
  const seen = new Set<string>();
  for (const entry of entries) seen.add(canonicalEntry(entry));
  const coveredFamily = familiesFullyCovered([...seen])[0];
  if (coveredFamily !== undefined) {
    throw new IpAllowListError(
      `ip_allow_list allows every address and is not permitted: its entries cover all of ${FAMILY_NAMES[coveredFamily]}`,
    );
  }
  if (seen.size > IP_ALLOW_LIST_MAX) {
    throw new IpAllowListError(
      `ip_allow_list may hold at most ${IP_ALLOW_LIST_MAX} entries after de-duplication, got ${seen.size}`,
    );
  }
  return [...seen];
}

/** True when the list is empty (unrestricted) or one of its canonical CIDRs covers the IP. */
export function isIpAllowed(clientIp: string, allowList: readonly string[]): boolean {
  if (allowList.length === 0) return true;
  const address = parseClientIp(clientIp);
  if (!address) return false;
  return allowList.some((cidr) => {
    const [network, prefix] = parsedCidr(cidr);
    return network.kind() === address.kind() && address.match(network, prefix);
  });
}

/** Parsed allow-list entries: lists are checked on every request and rarely change. */
const PARSED_CIDRS_MAX = 10_000;
const parsedCidrs = new Map<string, [Address, number]>();

function parsedCidr(cidr: string): [Address, number] {
  let parsed = parsedCidrs.get(cidr);
  if (!parsed) {
    parsed = ipaddr.parseCIDR(cidr);
    if (parsedCidrs.size >= PARSED_CIDRS_MAX) parsedCidrs.clear();
    parsedCidrs.set(cidr, parsed);
  }
  return parsed;
}
