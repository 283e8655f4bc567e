import { promises as dns } from 'node:dns';

/** The lookups verification needs; node's Resolver in production, fakes in unit tests. */
export interface DnsClient {
  resolveTxt(name: string): Promise<string[][]>;
  resolveCname(name: string): Promise<string[]>;
  resolveMx(name: string): Promise<Array<{ exchange: string; priority: number }>>;
}

export interface DnsClientOptions {
  /** `host:port` entries; null: the system's resolvers. */
  servers: string[] | null;
  timeoutMs: number;
  tries: number;
}

/** A resolver of its own (never the process-wide one), with the configured servers. */
export function createDnsClient(options: DnsClientOptions): DnsClient {
  const resolver = new dns.Resolver({ timeout: options.timeoutMs, tries: options.tries });
  if (options.servers) resolver.setServers(options.servers);
  return {
    resolveTxt: (name) => resolver.resolveTxt(name),
    resolveCname: (name) => resolver.resolveCname(name),
    resolveMx: (name) => resolver.resolveMx(name),
  };
}

/** NXDOMAIN and NODATA: the name or record does not exist, a real answer. */
const ABSENT_CODES: ReadonlySet<string> = new Set([dns.NOTFOUND, dns.NODATA]);

/**
 * Whether a lookup error is an authoritative "no such record". Anything else (timeout, SERVFAIL,
 * REFUSED, connection refused, a malformed answer…) says nothing about the record: transient.
 */
export function isAbsentError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && ABSENT_CODES.has(code);
}

export function describeDnsError(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : String(error);
}
