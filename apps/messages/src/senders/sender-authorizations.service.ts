import { CodedError, normalizeDomainName } from '@envoi/contracts-core';
import { DomainsErrorCode, DomainsSubjects } from '@envoi/contracts-domains';
import { TtlCache } from '@envoi/shared-cache';
import { NATS_CONNECTION, onDomainChanges, RpcClient } from '@envoi/shared-nats';
import {
  Inject,
  Injectable,
  Logger,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import type { NatsConnection, Subscription } from 'nats';

import { MessagesConfig } from '../messages.config';
import { MessagesException } from '../messages/messages.exception';

/** What a send needs to know about its sender domain (never the DKIM key). */
export interface AuthorizedSender {
  domainId: string;
  /** Normalised (lowercase, no trailing dot). */
  domain: string;
}

interface SenderAnswer extends AuthorizedSender {
  dnsValid: boolean;
  cacheTtlMs: number;
}

const MAX_ENTRIES = 10_000;

/**
 * Spec 4.2 rule 2: the From domain must be a domain of the account with valid DNS records. Asks
 * the domains service, keeps its answer as long as it says (bounded by configuration), and drops
 * it when the domain changes or goes away (broadcasts to every replica).
 */
@Injectable()
export class SenderAuthorizations implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(SenderAuthorizations.name);
  private readonly cache = new TtlCache<SenderAnswer>(MAX_ENTRIES);
  private subscriptions: Subscription[] = [];

  constructor(
    private readonly rpc: RpcClient,
    @Inject(NATS_CONNECTION) private readonly connection: NatsConnection,
    private readonly config: MessagesConfig,
  ) {}

  onModuleInit(): void {
    this.subscriptions = onDomainChanges(
      this.connection,
      (accountId, domain) => this.cache.invalidate(cacheKey(accountId, domain)),
      (error) => this.logger.warn(`domain change broadcast: ${String(error)}`),
    );
  }

  onModuleDestroy(): void {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
    this.subscriptions = [];
  }

  /** The sender domain, or SenderDomainNotOwned / SenderDomainNotVerified. */
  async authorize(accountId: string, rawDomain: string): Promise<AuthorizedSender> {
    const domain = normalizeDomainName(rawDomain);
    let answer: SenderAnswer;
    try {
      answer = await this.cache.get(
        cacheKey(accountId, domain),
        () => this.ask(accountId, domain),
        (value) => Math.min(value.cacheTtlMs, this.config.SENDER_CACHE_MAX_TTL_MS),
      );
    } catch (error) {
      if (error instanceof CodedError && error.hasCode(DomainsErrorCode.DomainNotFound)) {
        throw MessagesException.senderNotOwned(domain);
      }
      throw error;
    }
    if (!answer.dnsValid) throw MessagesException.senderNotVerified(domain);
    return { domainId: answer.domainId, domain: answer.domain };
  }

  private async ask(accountId: string, domain: string): Promise<SenderAnswer> {
    const reply = await this.rpc.request(DomainsSubjects.authorizeSender, {
      account_id: accountId,
      domain,
    });
    return {
      domainId: reply.domain_id,
      domain: reply.domain,
      dnsValid: reply.dns_valid,
      cacheTtlMs: reply.cache_ttl_ms,
    };
  }
}

function cacheKey(accountId: string, domain: string): string {
  return `${accountId}|${normalizeDomainName(domain)}`;
}
