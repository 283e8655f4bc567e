import { promises as dns } from 'node:dns';
import net from 'node:net';

/** The lookups routing needs; node's Resolver in production, fakes in unit tests. */
export interface RoutingDns {
  resolveMx(name: string): Promise<Array<{ exchange: string; priority: number }>>;
  resolve4(name: string): Promise<string[]>;
  resolve6(name: string): Promise<string[]>;
}

export interface RoutingDnsOptions {
  /** `host:port` entries; null: the system's resolvers. */
  servers: string[] | null;
  timeoutMs: number;
  tries: number;
}

/** A resolver of its own (never the process-wide one), with the configured servers. */
export function createRoutingDns(options: RoutingDnsOptions): RoutingDns {
  const resolver = new dns.Resolver({ timeout: options.timeoutMs, tries: options.tries });
  if (options.servers) resolver.setServers(options.servers);
  return {
    resolveMx: (name) => resolver.resolveMx(name),
    resolve4: (name) => resolver.resolve4(name),
    resolve6: (name) => resolver.resolve6(name),
  };
}

/** One mail server to try: its name (for TLS and logs) and its addresses, IPv4 first. */
export interface MailHost {
  host: string;
  addresses: string[];
}

/**
 * Where a domain's mail goes: hosts in the order to try them, or a permanent answer (the domain
 * does not exist, or publishes a null MX: RFC 7505), or a transient one (the lookup failed).
 */
export type Route =
  | { kind: 'hosts'; hosts: MailHost[]; implicit: boolean }
  | { kind: 'permanent'; reply: string }
  | { kind: 'transient'; reply: string };

export interface MxRecord {
  exchange: string;
  priority: number;
}

function normalize(name: string): string {
  return name.trim().toLowerCase().replace(/\.$/, '');
}

/**
 * MX targets in the order RFC 5321 §5.1 asks for: lowest preference first, records of equal
 * preference in random order, each host once. Null when the records are a null MX (a single
 * record whose exchange is the root, RFC 7505).
 */
export function orderMxHosts(
  records: readonly MxRecord[],
  random: () => number = Math.random,
): string[] | null {
  const hosts = records.map((record) => ({ ...record, exchange: normalize(record.exchange) }));
  if (hosts.some((record) => record.exchange === '')) {
    // A null MX is meant to be alone; any other record beside it is ignored too.
    return null;
  }
  const keyed = hosts.map((record) => ({ record, key: random() }));
  keyed.sort((a, b) => a.record.priority - b.record.priority || a.key - b.key);
  const seen = new Set<string>();
  const ordered: string[] = [];
  for (const { record } of keyed) {
    if (seen.has(record.exchange)) continue;
    seen.add(record.exchange);
    ordered.push(record.exchange);
  }
  return ordered;
}

function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : String(error);
}

/** NXDOMAIN: the name does not exist. */
function isNxDomain(error: unknown): boolean {
  return errorCode(error) === dns.NOTFOUND;
}

/** NODATA: the name exists, with no record of that type. */
function isNoData(error: unknown): boolean {
  return errorCode(error) === dns.NODATA;
}

/**
 * Resolves where mail for a domain goes (RFC 5321 §5.1): its MX hosts by preference, or, when it
 * has no MX record, the domain itself as an implicit MX (its A/AAAA records). Every host's
 * addresses are looked up here (never through the system resolver), IPv4 first.
 */
export class MxResolver {
  constructor(
    private readonly dnsClient: RoutingDns,
    private readonly random: () => number = Math.random,
  ) {}

  async route(rawDomain: string): Promise<Route> {
    const domain = normalize(rawDomain);
    if (net.isIP(domain)) {
      return { kind: 'permanent', reply: `550 5.1.2 ${domain}: address literals are not routed` };
    }
    let records: MxRecord[];
    try {
      records = await this.dnsClient.resolveMx(domain);
    } catch (error) {
      if (isNxDomain(error)) {
        return {
          kind: 'permanent',
          reply: `550 5.1.2 ${domain}: the recipient domain does not exist (NXDOMAIN)`,
        };
      }
      if (!isNoData(error)) {
        return {
          kind: 'transient',
          reply: `451 4.4.3 ${domain}: MX lookup failed (${errorCode(error)})`,
        };
      }
      records = [];
    }
    if (records.length === 0) {
      const host = await this.addressesOf(domain);
      if (host.kind !== 'ok') {
        return host.kind === 'absent'
          ? {
              kind: 'permanent',
              reply: `550 5.1.2 ${domain}: no MX, A or AAAA record`,
            }
          : { kind: 'transient', reply: `451 4.4.3 ${domain}: address lookup failed` };
      }
      return {
        kind: 'hosts',
        hosts: [{ host: domain, addresses: host.addresses }],
        implicit: true,
      };
    }
    const ordered = orderMxHosts(records, this.random);
    if (ordered === null) {
      return {
        kind: 'permanent',
        reply: `556 5.1.10 ${domain}: the recipient domain accepts no mail (null MX)`,
      };
    }
    const lookups = await Promise.all(ordered.map((host) => this.addressesOf(host)));
    const hosts: MailHost[] = [];
    let failed = false;
    ordered.forEach((host, index) => {
      const lookup = lookups[index];
      if (lookup?.kind === 'ok') hosts.push({ host, addresses: lookup.addresses });
      else if (lookup?.kind === 'failed') failed = true;
    });
    if (hosts.length === 0) {
      // RFC 5321 §5.1: MX hosts that do not resolve leave the message queued, not bounced.
      return {
        kind: 'transient',
        reply: `451 4.4.4 ${domain}: no MX host has an address${failed ? ' (lookups failed)' : ''}`,
      };
    }
    return { kind: 'hosts', hosts, implicit: false };
  }

  /** A host's IPv4 then IPv6 addresses; absent when it has none; failed when a lookup erred. */
  private async addressesOf(
    host: string,
  ): Promise<{ kind: 'ok'; addresses: string[] } | { kind: 'absent' } | { kind: 'failed' }> {
    if (net.isIP(host)) return { kind: 'ok', addresses: [host] };
    const [v4, v6] = await Promise.allSettled([
      this.dnsClient.resolve4(host),
      this.dnsClient.resolve6(host),
    ]);
    const addresses = [
      ...(v4.status === 'fulfilled' ? v4.value : []),
      ...(v6.status === 'fulfilled' ? v6.value : []),
    ];
    if (addresses.length > 0) return { kind: 'ok', addresses };
    const absent = (outcome: PromiseSettledResult<string[]>) =>
      outcome.status === 'fulfilled' || isNxDomain(outcome.reason) || isNoData(outcome.reason);
    return absent(v4) && absent(v6) ? { kind: 'absent' } : { kind: 'failed' };
  }
}
