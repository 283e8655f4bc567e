import { canonicalIp, isIpAllowed } from '@envoi/shared-net';

/**
 * The client's address as Fastify's trustProxy answers it for routed requests: the socket's peer,
 * or, while that hop is a trusted proxy, the next address of X-Forwarded-For from the right.
 */
export function clientAddress(
  peer: string | undefined,
  forwardedFor: string | string[] | undefined,
  trustedProxies: readonly string[],
): string {
  let address = canonicalIp(peer ?? '') ?? peer ?? '';
  if (trustedProxies.length === 0) return address;
  const header = Array.isArray(forwardedFor) ? forwardedFor.join(',') : (forwardedFor ?? '');
  const hops = header
    .split(',')
    .map((hop) => hop.trim())
    .filter((hop) => hop.length > 0)
    .reverse();
  for (const hop of hops) {
    if (!isIpAllowed(address, trustedProxies)) break;
    address = canonicalIp(hop) ?? hop;
  }
  return address;
}
