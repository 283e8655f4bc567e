import { onDomainChanges } from '@envoi/clients-domains';
import { type DomainOwner, DomainsSubjects } from '@envoi/contracts-domains';
import { TtlCache } from '@envoi/shared-cache';
import { NATS_CONNECTION, RpcClient } from '@envoi/shared-nats';
import {
  Inject,
  Injectable,
  Logger,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import type { NatsConnection, Subscription } from 'nats';

import { RoutesConfig } from '../routes.config';

const MAX_CACHED_DOMAINS = 10_000;

/**
 * Which accounts have a domain name (domains service), kept per replica for
 * ROUTES_DOMAIN_CACHE_TTL_MS and dropped at once when the domains service broadcasts a change or
 * deletion of that name.
 */
@Injectable()
export class DomainOwners implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(DomainOwners.name);
  private readonly owners = new TtlCache<DomainOwner[]>(MAX_CACHED_DOMAINS);
  private subscriptions: Subscription[] = [];

  constructor(
    private readonly rpc: RpcClient,
    @Inject(NATS_CONNECTION) private readonly connection: NatsConnection,
    private readonly config: RoutesConfig,
  ) {}

  onModuleInit(): void {
    this.subscriptions = onDomainChanges(
      this.connection,
      (_accountId, domain) => this.owners.invalidate(domain),
      (error) => this.logger.warn(`domain change broadcast: ${String(error)}`),
    );
  }

  onModuleDestroy(): void {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
    this.subscriptions = [];
  }

  /** The owners of a normalised domain name, DNS-valid ones first, then the oldest. */
  of(domain: string): Promise<DomainOwner[]> {
    return this.owners.get(
      domain,
      async () => (await this.rpc.request(DomainsSubjects.findOwners, { domain })).owners,
      () => this.config.ROUTES_DOMAIN_CACHE_TTL_MS,
    );
  }
}
