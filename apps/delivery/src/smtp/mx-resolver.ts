import { promises as dns } from 'node:dns';
import net from 'node:net';

import { TtlCache } from '@envoi/shared-cache';

/** An A or AAAA record, with its TTL in seconds. */
export interface AddressRecord {
  address: string;
  ttl: number;
}

/**
 * The lookups routing needs; node's Resolver in production, fakes in unit tests. Node reports the
 * TTL of A/AAAA answers (`{ ttl: true }`) but not of MX answers: see RouteCacheOptions.
 */
export interface RoutingDns {
  resolveMx(name: string): Promise<Array<{ exchange: string; priority: number }>>;
  resolve4(name: string): Promise<AddressRecord[]>;
  resolve6(name: string): Promise<AddressRecord[]>;
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
    resolve4: (name) => resolver.resolve4(name, { ttl: true }),
    resolve6: (name) => resolver.resolve6(name, { ttl: true }),
  };
}

/**
 * How long routes are reused. A route is kept for the smallest TTL of the A/AAAA answers it was
 * built from, clamped to [MIN_ROUTE_TTL_MS, maxTtlMs]. Node's resolveMx does not report the MX
 * records' TTL, so maxTtlMs stands in for it: keep it at or below the MX TTLs that matter (a few
 * minutes). Permanent answers (NXDOMAIN, null MX, no MX and no address) are kept for
 * negativeTtlMs: the SOA minimum that should bound them is not reported either. A negative part of
 * a positive route (no MX record: implicit MX; an MX host without address) bounds it the same way.
 * Lookup failures (SERVFAIL, timeouts, even of one host or one address family) are never kept.
 */
export interface RouteCacheOptions {
  /** The longest a route is kept; 0: never. */
  maxTtlMs: number;
  /** How long a permanent answer is kept (at most maxTtlMs); 0: never. */
  negativeTtlMs: number;
  /** Domains kept at most; the oldest entries go first. */
  maxEntries: number;
}

/**
 * The shortest a positive route is kept (maxTtlMs permitting): records with a TTL of 0 do not make
 * every message ask again.
 */
export const MIN_ROUTE_TTL_MS = 1_000;

export interface MxResolverOptions {
  /** Omitted: nothing is kept (concurrent lookups of one domain still share one). */
  cache?: RouteCacheOptions;
  /** Orders MX hosts of equal preference; on every route, cached or not. */
  random?: () => number;
  now?: () => number;
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

/** A host's addresses and the smallest TTL among them; partial when one address family failed. */
type HostLookup =
  | { kind: 'ok'; addresses: string[]; ttlMs: number; partial: boolean }
  | { kind: 'absent' }
  | { kind: 'failed' };

/**
 * What the lookups found, kept for ttlMs (0: not kept). MX routes keep their records, not an
 * order: hosts of equal preference are shuffled again on every route.
 */
type Resolution =
  | { kind: 'route'; route: Route; ttlMs: number }
  | { kind: 'mx'; records: MxRecord[]; addresses: ReadonlyMap<string, string[]>; ttlMs: number };

/** A route whose arrays the caller may keep or change without touching the cached one. */
function copyOf(route: Route): Route {
  return route.kind === 'hosts'
    ? { ...route, hosts: route.hosts.map((host) => ({ ...host, addresses: [...host.addresses] })) }
    : { ...route };
}

/**
 * Resolves where mail for a domain goes (RFC 5321 §5.1): its MX hosts by preference, or, when it
 * has no MX record, the domain itself as an implicit MX (its A/AAAA records). Every host's
 * addresses are looked up here (never through the system resolver), IPv4 first. Answers are kept
 * as RouteCacheOptions describes, and concurrent routes of one domain share one lookup.
 */
export class MxResolver {
  private readonly cache: TtlCache<Resolution>;
  private readonly random: () => number;
  private readonly maxTtlMs: number;
  private readonly negativeTtlMs: number;

  constructor(
    private readonly dnsClient: RoutingDns,
    options: MxResolverOptions = {},
  ) {
    this.random = options.random ?? Math.random;
    this.maxTtlMs = Math.max(0, options.cache?.maxTtlMs ?? 0);
    this.negativeTtlMs = Math.min(this.maxTtlMs, Math.max(0, options.cache?.negativeTtlMs ?? 0));
    this.cache = new TtlCache<Resolution>(options.cache?.maxEntries ?? 0, options.now);
  }

  async route(rawDomain: string): Promise<Route> {
    const domain = normalize(rawDomain);
    if (net.isIP(domain)) {
      return { kind: 'permanent', reply: `550 5.1.2 ${domain}: address literals are not routed` };
    }
    const resolution = await this.cache.get(
      domain,
      () => this.resolve(domain),
      (found) => found.ttlMs,
    );
    if (resolution.kind === 'route') return copyOf(resolution.route);
    const hosts: MailHost[] = [];
    for (const host of orderMxHosts(resolution.records, this.random) ?? []) {
      const addresses = resolution.addresses.get(host);
      if (addresses) hosts.push({ host, addresses: [...addresses] });
    }
    return { kind: 'hosts', hosts, implicit: false };
  }

  private async resolve(domain: string): Promise<Resolution> {
    let records: MxRecord[];
    try {
      records = await this.dnsClient.resolveMx(domain);
    } catch (error) {
      if (isNxDomain(error)) {
        return this.permanent(
          `550 5.1.2 ${domain}: the recipient domain does not exist (NXDOMAIN)`,
        );
      }
      if (!isNoData(error)) {
        return this.transient(`451 4.4.3 ${domain}: MX lookup failed (${errorCode(error)})`);
      }
      records = [];
    }
    if (records.length === 0) {
      const host = await this.addressesOf(domain);
      if (host.kind !== 'ok') {
        return host.kind === 'absent'
          ? this.permanent(`550 5.1.2 ${domain}: no MX, A or AAAA record`)
          : this.transient(`451 4.4.3 ${domain}: address lookup failed`);
      }
      return {
        kind: 'route',
        route: {
          kind: 'hosts',
          hosts: [{ host: domain, addresses: host.addresses }],
          implicit: true,
        },
        // The MX answer was negative (NODATA): kept no longer than one.
        ttlMs: host.partial ? 0 : Math.min(this.positiveTtl(host.ttlMs), this.negativeTtlMs),
      };
    }
    const ordered = orderMxHosts(records, this.random);
    if (ordered === null) {
      return this.permanent(`556 5.1.10 ${domain}: the recipient domain accepts no mail (null MX)`);
    }
    const lookups = await Promise.all(ordered.map((host) => this.addressesOf(host)));
    const addresses = new Map<string, string[]>();
    let failed = false;
    let absent = false;
    // The MX records' own TTL is not known (see RouteCacheOptions): maxTtlMs stands in for it.
    let ttlMs = Infinity;
    ordered.forEach((host, index) => {
      const lookup = lookups[index];
      if (lookup?.kind === 'ok') {
        addresses.set(host, lookup.addresses);
        ttlMs = Math.min(ttlMs, lookup.ttlMs);
        failed ||= lookup.partial;
      } else if (lookup?.kind === 'failed') failed = true;
      else absent = true;
    });
    if (addresses.size === 0) {
      // RFC 5321 §5.1: MX hosts that do not resolve leave the message queued, not bounced.
      return this.transient(
        `451 4.4.4 ${domain}: no MX host has an address${failed ? ' (lookups failed)' : ''}`,
      );
    }
    ttlMs = this.positiveTtl(ttlMs);
    return {
      kind: 'mx',
      records,
      addresses,
      ttlMs: failed ? 0 : absent ? Math.min(ttlMs, this.negativeTtlMs) : ttlMs,
    };
  }

  /** A TTL from DNS, clamped to [MIN_ROUTE_TTL_MS, maxTtlMs]. */
  private positiveTtl(ttlMs: number): number {
    return Math.min(this.maxTtlMs, Math.max(MIN_ROUTE_TTL_MS, ttlMs));
  }

  private permanent(reply: string): Resolution {
    return { kind: 'route', route: { kind: 'permanent', reply }, ttlMs: this.negativeTtlMs };
  }

  private transient(reply: string): Resolution {
    return { kind: 'route', route: { kind: 'transient', reply }, ttlMs: 0 };
  }

  /** A host's IPv4 then IPv6 addresses; absent when it has none; failed when a lookup erred. */
  private async addressesOf(host: string): Promise<HostLookup> {
    if (net.isIP(host)) return { kind: 'ok', addresses: [host], ttlMs: Infinity, partial: false };
    const [v4, v6] = await Promise.allSettled([
      this.dnsClient.resolve4(host),
      this.dnsClient.resolve6(host),
    ]);
    const records = [
      ...(v4.status === 'fulfilled' ? v4.value : []),
      ...(v6.status === 'fulfilled' ? v6.value : []),
    ];
    const absent = (outcome: PromiseSettledResult<AddressRecord[]>) =>
      outcome.status === 'fulfilled' || isNxDomain(outcome.reason) || isNoData(outcome.reason);
    if (records.length > 0) {
      return {
        kind: 'ok',
        addresses: records.map((record) => record.address),
        ttlMs: Math.min(...records.map((record) => record.ttl * 1_000)),
        partial: !absent(v4) || !absent(v6),
      };
    }
    return absent(v4) && absent(v6) ? { kind: 'absent' } : { kind: 'failed' };
  }
}
