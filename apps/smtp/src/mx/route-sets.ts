import {
  type DomainRouteSet,
  matchRouteSet,
  parseRecipientAddress,
  type RecipientMatch,
  RoutesSubjects,
} from '@envoi/contracts-routes';
import { TtlCache } from '@envoi/shared-cache';

import type { BusRequester } from '../submission/bus-requester';

/**
 * The routes service's route set of each domain, kept per replica for `ttlMs` (at most
 * `maxDomains`; the oldest go first) so that RCPT asks it once per domain, not once per address.
 * The routes service's change broadcast (and the domains service's) drops a domain's set at once;
 * the TTL heals a lost broadcast.
 */
export class RouteSets {
  private readonly sets: TtlCache<DomainRouteSet>;

  constructor(
    private readonly bus: BusRequester,
    private readonly ttlMs: number,
    maxDomains: number,
    now?: () => number,
  ) {
    this.sets = new TtlCache(maxDomains, now);
  }

  /** What the routes take `recipient` as (a lowercase `local@domain` address). */
  async match(recipient: string): Promise<RecipientMatch> {
    const address = parseRecipientAddress(recipient);
    if (!address) return { outcome: 'not_routed' };
    const set = await this.sets.get(
      address.domain,
      () => this.bus.request(RoutesSubjects.domainRoutes, { domain: address.domain }),
      () => this.ttlMs,
    );
    return matchRouteSet(set, address);
  }

  /** Drops the route set of `domain`; null: of every domain. */
  forget(domain: string | null): void {
    if (domain === null) this.sets.clear();
    else this.sets.invalidate(domain.toLowerCase());
  }
}
