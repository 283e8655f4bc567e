import { describeDnsError, type DnsClient, isAbsentError } from './dns-client';

/** A lookup's result: records, an authoritative absence, or no usable answer. */
export type Lookup<T> =
  { kind: 'found'; records: T[] } | { kind: 'absent' } | { kind: 'transient'; reason: string };

export const MAX_CNAME_DEPTH = 8;

/** Compares host names case-insensitively, without trailing dots. */
export function sameHost(a: string, b: string): boolean {
  return a.trim().toLowerCase().replace(/\.$/, '') === b.trim().toLowerCase().replace(/\.$/, '');
}

function normalizeHost(name: string): string {
  return name.trim().toLowerCase().replace(/\.$/, '');
}

/**
 * Lookups that follow CNAME chains (bounded) and sort failures into absent and transient.
 * Recursive resolvers chase CNAMEs themselves; when an answer holds only the CNAME, its target
 * is queried here.
 */
export class DnsLookup {
  constructor(
    private readonly client: DnsClient,
    private readonly maxCnameDepth = MAX_CNAME_DEPTH,
  ) {}

  /** TXT records at `name`, each record's strings joined. */
  txt(name: string): Promise<Lookup<string>> {
    return this.followingCnames(name, async (host) =>
      (await this.client.resolveTxt(host)).map((strings) => strings.join('')),
    );
  }

  /** MX exchanges at `name`, normalised. */
  mx(name: string): Promise<Lookup<string>> {
    return this.followingCnames(name, async (host) =>
      (await this.client.resolveMx(host)).map((record) => normalizeHost(record.exchange)),
    );
  }

  /** The CNAME chain from `name`: every target in order, normalised; absent when no CNAME. */
  async cnameChain(name: string): Promise<Lookup<string>> {
    const chain: string[] = [];
    let current = normalizeHost(name);
    for (let depth = 0; depth < this.maxCnameDepth; depth++) {
      let targets: string[];
      try {
        targets = await this.client.resolveCname(current);
      } catch (error) {
        if (isAbsentError(error)) break;
        return { kind: 'transient', reason: `${current}: ${describeDnsError(error)}` };
      }
      const next = targets[0];
      if (next === undefined) break;
      current = normalizeHost(next);
      if (chain.includes(current)) break; // a loop
      chain.push(current);
    }
    return chain.length > 0 ? { kind: 'found', records: chain } : { kind: 'absent' };
  }

  private async followingCnames<T>(
    name: string,
    resolve: (host: string) => Promise<T[]>,
  ): Promise<Lookup<T>> {
    let current = normalizeHost(name);
    const seen = new Set<string>([current]);
    for (let depth = 0; depth <= this.maxCnameDepth; depth++) {
      try {
        const records = await resolve(current);
        if (records.length > 0) return { kind: 'found', records };
      } catch (error) {
        if (!isAbsentError(error)) {
          return { kind: 'transient', reason: `${current}: ${describeDnsError(error)}` };
        }
      }
      // Nothing of the type here: an alias whose target the resolver did not chase?
      let targets: string[];
      try {
        targets = await this.client.resolveCname(current);
      } catch (error) {
        if (isAbsentError(error)) return { kind: 'absent' };
        return { kind: 'transient', reason: `${current}: ${describeDnsError(error)}` };
      }
      const next = targets[0] === undefined ? undefined : normalizeHost(targets[0]);
      if (next === undefined || seen.has(next)) return { kind: 'absent' };
      seen.add(next);
      current = next;
    }
    return { kind: 'absent' };
  }
}
