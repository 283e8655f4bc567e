import { DomainsSubjects } from '@envoi/contracts-domains';

import type { BusRequester } from '../submission/bus-requester';

interface CachedAnswer {
  verified: boolean;
  expiresAt: number;
}

/**
 * The domains service's answer to "is this host a domain's verified return-path host?", kept for
 * the TTL the answer gives (at most `maxEntries` hosts; the oldest go first). A domain's change
 * broadcast drops its hosts at once.
 */
export class ReturnPathHosts {
  private readonly answers = new Map<string, CachedAnswer>();

  constructor(
    private readonly bus: BusRequester,
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  async isVerified(host: string): Promise<boolean> {
    const cached = this.answers.get(host);
    if (cached && cached.expiresAt > this.now()) return cached.verified;
    const answer = await this.bus.request(DomainsSubjects.matchReturnPathHost, { host });
    this.answers.delete(host);
    if (answer.cache_ttl_ms > 0) {
      this.answers.set(host, {
        verified: answer.verified,
        expiresAt: this.now() + answer.cache_ttl_ms,
      });
      for (const oldest of this.answers.keys()) {
        if (this.answers.size <= this.maxEntries) break;
        this.answers.delete(oldest);
      }
    }
    return answer.verified;
  }

  /** Drops the cached hosts of `domain` (its return-path host is one of its subdomains). */
  forget(domain: string): void {
    for (const host of this.answers.keys()) {
      if (host.endsWith(`.${domain}`)) this.answers.delete(host);
    }
  }
}
