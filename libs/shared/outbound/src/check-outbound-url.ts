import { blockedAddressReason, type OutboundPolicy } from './outbound-policy';

/**
 * Ports a target may use: the web's defaults and every unprivileged port. Privileged ports
 * (SMTP, SSH, DNS...) are where request smuggling into another protocol does harm.
 */
export function isAllowedPort(port: number): boolean {
  return port === 80 || port === 443 || (port >= 1024 && port <= 65535);
}

export type OutboundUrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

const refuse = (reason: string): OutboundUrlCheck => ({ ok: false, reason });

/** `localhost`, `*.localhost` (RFC 6761), with or without a trailing dot. */
function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/** The literal IP of a WHATWG-parsed hostname (IPv4 already normalised, IPv6 bracketed). */
function literalAddress(hostname: string): string | null {
  if (hostname.startsWith('[') && hostname.endsWith(']')) return hostname.slice(1, -1);
  return /^[0-9.]+$/.test(hostname) ? hostname : null;
}

/**
 * Checks a target URL when it is saved: absolute, https (http only when the policy allows it), no
 * user info, an allowed port, and no literal host that the connect-time check would refuse
 * anyway (WHATWG parsing turns `2130706433`, `0177.0.0.1` and `0x7f000001` into `127.0.0.1`).
 * Names are resolved only when connecting, where the address actually reached is checked.
 */
export function checkOutboundUrl(text: string, policy: OutboundPolicy): OutboundUrlCheck {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return refuse('url must be an absolute URL');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) {
    return refuse(policy.allowHttp ? 'url must use https or http' : 'url must use https');
  }
  if (url.username !== '' || url.password !== '') {
    return refuse('url must not contain a user name or password');
  }
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  if (!isAllowedPort(port)) {
    return refuse(`url port ${port} is not allowed: use 80, 443 or a port from 1024 to 65535`);
  }
  const literal = literalAddress(url.hostname);
  if (literal !== null) {
    const reason = blockedAddressReason(literal, policy);
    if (reason !== null) return refuse(`url host ${reason}`);
  } else if (isLocalhostName(url.hostname) && blockedAddressReason('127.0.0.1', policy) !== null) {
    return refuse(
      `url host ${url.hostname} is a loopback name, which outbound requests may not reach`,
    );
  }
  return { ok: true, url };
}
