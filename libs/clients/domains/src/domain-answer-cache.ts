import { normalizeDomainName } from '@envoi/contracts-core';
import { TtlCache } from '@envoi/shared-cache';

export interface DomainAnswerCacheOptions<V> {
  /** How long the domains service lets this answer be kept. */
  ttlOf: (answer: V) => number;
  /** The longest this service keeps any answer, whatever the answer says. */
  maxTtlMs: number;
  maxEntries?: number;
  now?: () => number;
}

const DEFAULT_MAX_ENTRIES = 10_000;

/**
 * Answers about one domain of one account, kept until their TTL ends or the domain changes
 * (`invalidate`, driven by the domains service's broadcasts through DomainsClient). An
 * invalidation also discards a lookup in flight, so an answer from before a change (a rotated or
 * deleted key, a domain whose DNS went invalid) is never stored.
 */
export class DomainAnswerCache<V> {
  private readonly answers: TtlCache<V>;

  constructor(private readonly options: DomainAnswerCacheOptions<V>) {
    this.answers = new TtlCache<V>(options.maxEntries ?? DEFAULT_MAX_ENTRIES, options.now);
  }

  /** The cached answer, or `load`'s for the normalised domain name. */
  get(accountId: string, rawDomain: string, load: (domain: string) => Promise<V>): Promise<V> {
    const domain = normalizeDomainName(rawDomain);
    return this.answers.get(
      cacheKey(accountId, domain),
      () => load(domain),
      (answer) => Math.min(this.options.ttlOf(answer), this.options.maxTtlMs),
    );
  }

  invalidate(accountId: string, rawDomain: string): void {
    this.answers.invalidate(cacheKey(accountId, normalizeDomainName(rawDomain)));
  }

  get size(): number {
    return this.answers.size;
  }
}

function cacheKey(accountId: string, domain: string): string {
  return `${accountId}|${domain}`;
}
