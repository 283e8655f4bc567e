import { canonicalizeAllowList, isIpAllowed, parseClientIp } from '@envoi/shared-net';

/** Where outbound requests (webhooks, inbound routes) may go. */
export interface OutboundPolicy {
  /** Plain `http://` targets are accepted (development); otherwise https only. */
  allowHttp: boolean;
  /** Canonical CIDRs whose addresses are reachable although private, loopback or reserved. */
  allowCidrs: readonly string[];
}

/** The settings a service reads its outbound policy from (see libs/shared/config outbound-env). */
export interface OutboundSettings {
  OUTBOUND_ALLOW_HTTP: boolean;
  OUTBOUND_ALLOW_CIDRS: string;
}

/** The policy of the OUTBOUND_* settings; the CIDR list is comma-separated, possibly empty. */
export function outboundPolicyOf(settings: OutboundSettings): OutboundPolicy {
  const entries = settings.OUTBOUND_ALLOW_CIDRS.split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  return { allowHttp: settings.OUTBOUND_ALLOW_HTTP, allowCidrs: canonicalizeAllowList(entries) };
}

/**
 * Why an address may not be the target of an outbound request, or null when it may. Anything
 * but a public unicast address is refused: loopback, private, carrier-grade NAT, link-local,
 * unique-local, multicast, unspecified, reserved, documentation and the IPv6 forms that embed an
 * IPv4 address (6to4, Teredo, NAT64), unless an allowed CIDR covers it. IPv4-mapped IPv6 is
 * judged as its IPv4 address.
 */
export function blockedAddressReason(ip: string, policy: OutboundPolicy): string | null {
  const address = parseClientIp(ip);
  if (!address) return `${ip} is not an IP address`;
  if (policy.allowCidrs.length > 0 && isIpAllowed(address.toString(), policy.allowCidrs)) {
    return null;
  }
  const range = address.range();
  if (range === 'unicast') return null;
  return `${address.toString()} is a ${range} address, which outbound requests may not reach`;
}
