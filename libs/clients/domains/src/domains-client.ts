import { DomainsSubjects, type SenderAuthorization } from '@envoi/contracts-domains';
import { NATS_CONNECTION, RpcClient } from '@envoi/shared-nats';
import {
  Inject,
  Injectable,
  Logger,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import type { NatsConnection, Subscription } from 'nats';

import { DomainAnswerCache } from './domain-answer-cache';
import { onDomainChanges } from './domain-changes';

export const DOMAINS_CLIENT_OPTIONS = Symbol('DOMAINS_CLIENT_OPTIONS');

export interface DomainsClientOptions {
  /** The longest any answer about a domain is kept, whatever the domains service allows. */
  senderCacheMaxTtlMs: number;
}

/**
 * The domains service, as other services use it: sender authorizations kept as long as its answer
 * says (bounded by `senderCacheMaxTtlMs`) and dropped at once when the domain changes or goes away
 * (broadcast to every replica). Errors come as the service answers them (RpcError with its code,
 * `domains.domain_not_found` for a domain the account does not own).
 */
@Injectable()
export class DomainsClient implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(DomainsClient.name);
  private readonly caches: Array<Pick<DomainAnswerCache<unknown>, 'invalidate'>> = [];
  private readonly authorizations: DomainAnswerCache<SenderAuthorization>;
  private subscriptions: Subscription[] = [];

  constructor(
    private readonly rpc: RpcClient,
    @Inject(NATS_CONNECTION) private readonly connection: NatsConnection,
    @Inject(DOMAINS_CLIENT_OPTIONS) private readonly options: DomainsClientOptions,
  ) {
    this.authorizations = this.createCache((authorization) => authorization.cache_ttl_ms);
  }

  onModuleInit(): void {
    this.subscriptions = onDomainChanges(
      this.connection,
      (accountId, domain) => {
        for (const cache of this.caches) cache.invalidate(accountId, domain);
      },
      (error) => this.logger.warn(`domain change broadcast: ${String(error)}`),
    );
  }

  onModuleDestroy(): void {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
    this.subscriptions = [];
  }

  /** May the account send from the domain (cached)? Its `dns_valid` says whether it may now. */
  senderAuthorization(accountId: string, domain: string): Promise<SenderAuthorization> {
    return this.authorizations.get(accountId, domain, (name) =>
      this.rpc.request(DomainsSubjects.authorizeSender, { account_id: accountId, domain: name }),
    );
  }

  /**
   * A cache for a service's own answers about domains (what it builds from domains RPCs), with
   * the same bound and emptied on the same broadcasts as the client's own.
   */
  createCache<V>(ttlOf: (answer: V) => number): DomainAnswerCache<V> {
    const cache = new DomainAnswerCache<V>({
      ttlOf,
      maxTtlMs: this.options.senderCacheMaxTtlMs,
    });
    this.caches.push(cache);
    return cache;
  }
}
