import type { RecipientMatch } from '@envoi/contracts-routes';
import { Injectable } from '@nestjs/common';

import {
  parseRecipientAddress,
  parseRecipientPattern,
  patternMatches,
} from '../routes/recipient-pattern';
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
    const owners = await this.owners.of(address.domain);
    const candidates = await this.routes.findMatchable(
      owners.map((owner) => owner.account_id),
      address.domain,
    );
    for (const owner of owners) {
      const ownRoutes = candidates.filter((route) => route.accountId === owner.account_id);
      if (ownRoutes.length === 0) continue;
      const routeIds = ownRoutes
        .filter((route) => {
          const pattern = parseRecipientPattern(route.recipient);
          return pattern !== null && patternMatches(pattern, address);
        })
        .map((route) => route.id);
      if (routeIds.length === 0) return { outcome: 'unknown_recipient' };
      return {
        outcome: 'route',
        account_id: owner.account_id,
        domain: address.domain,
        route_ids: routeIds,
      };
    }
    return { outcome: 'not_routed' };
  }
}
