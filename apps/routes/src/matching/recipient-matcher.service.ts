import { normalizeDomainName } from '@envoi/contracts-core';
import {
  type DomainRouteSet,
  matchRouteSet,
  parseRecipientAddress,
  type RecipientMatch,
} from '@envoi/contracts-routes';
import { Injectable } from '@nestjs/common';

import { RoutesRepository } from '../routes/routes.repository';
import { DomainOwners } from './domain-owners.service';

/**
 * The MX's question at RCPT: which routes take this address? The domain's owners come from a
 * per-replica cache, the enabled routes from one indexed statement; the first owning account
 * (DNS-valid first, then the oldest) with a route for the domain answers.
 */
@Injectable()
export class RecipientMatcher {
  constructor(
    private readonly owners: DomainOwners,
    private readonly routes: RoutesRepository,
  ) {}

  async match(recipient: string): Promise<RecipientMatch> {
    const address = parseRecipientAddress(recipient);
    if (!address) return { outcome: 'not_routed' };
    return matchRouteSet(await this.routeSet(address.domain), address);
  }

  /** The enabled routes of the first owner of `domain` that has any for it. */
  async routeSet(rawDomain: string): Promise<DomainRouteSet> {
    const domain = normalizeDomainName(rawDomain);
    const owners = await this.owners.of(domain);
    const candidates = await this.routes.findMatchable(
      owners.map((owner) => owner.account_id),
      domain,
    );
    for (const owner of owners) {
      const ownRoutes = candidates.filter((route) => route.accountId === owner.account_id);
      if (ownRoutes.length === 0) continue;
      return {
        outcome: 'routed',
        account_id: owner.account_id,
        domain,
        routes: ownRoutes.map((route) => ({ id: route.id, recipient: route.recipient })),
      };
    }
    return { outcome: 'not_routed' };
  }
}
