import { onDomainChanges } from '@envoi/clients-domains';
import { type DomainOwner, DomainsSubjects } from '@envoi/contracts-domains';
import { BroadcastDroppedCache, NATS_CONNECTION, RpcClient } from '@envoi/shared-nats';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { NatsConnection, Subscription } from 'nats';

import { RoutesConfig } from '../routes.config';

const MAX_CACHED_DOMAINS = 10_000;

/**
 * Which accounts have a domain name (domains service), kept per replica for
 * ROUTES_DOMAIN_CACHE_TTL_MS and dropped at once when the domains service broadcasts a change or
 * deletion of that name.
 */
@Injectable()
export class DomainOwners extends BroadcastDroppedCache<DomainOwner[]> {
  private readonly logger = new Logger(DomainOwners.name);

  constructor(
    private readonly rpc: RpcClient,
    @Inject(NATS_CONNECTION) private readonly connection: NatsConnection,
    private readonly config: RoutesConfig,
  ) {
    super(MAX_CACHED_DOMAINS);
  }

  protected listen(drop: (domain: string) => void): Subscription[] {
    return onDomainChanges(
      this.connection,
      (_accountId, domain) => drop(domain),
      (error) => this.logger.warn(`domain change broadcast: ${String(error)}`),
    );
  }

  /** The owners of a normalised domain name, DNS-valid ones first, then the oldest. */
  of(domain: string): Promise<DomainOwner[]> {
    return this.cache.get(
      domain,
      async () => (await this.rpc.request(DomainsSubjects.findOwners, { domain })).owners,
      () => this.config.ROUTES_DOMAIN_CACHE_TTL_MS,
    );
  }
}
