import { createPrivateKey, type KeyObject } from 'node:crypto';

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

import { DeliveryConfig } from '../delivery.config';

/** What signing and the envelope need of a sender domain. */
export interface SenderKey {
  domain: string;
  selector: string;
  /** Parsed once from the PEM the domains service gives (a KeyObject signs ~1.6× faster). */
  privateKey: KeyObject;
  /** The domain's verified return-path host, or null (then the platform's bounce host). */
  returnPathHost: string | null;
}

/** The sender domain no longer exists (deleted after the message was accepted). */
export class SenderDomainGoneError extends Error {
  constructor(domain: string) {
    super(`the sender domain ${domain} no longer exists`);
    this.name = 'SenderDomainGoneError';
  }
}

const MAX_ENTRIES = 10_000;

/**
 * DKIM keys and return-path hosts of sender domains, from the domains service: kept as long as
 * its answer says (bounded by configuration), dropped at once when the domain changes or goes
 * away (broadcast to every replica). Concurrent lookups of one domain share one request.
 */
@Injectable()
export class SenderKeys implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(SenderKeys.name);
  private readonly cache = new TtlCache<SenderKey & { cacheTtlMs: number }>(MAX_ENTRIES);
  private subscriptions: Subscription[] = [];

  constructor(
    private readonly rpc: RpcClient,
    @Inject(NATS_CONNECTION) private readonly connection: NatsConnection,
    private readonly config: DeliveryConfig,
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

  /** The domain's key; SenderDomainGoneError when it was deleted; bus errors as they are. */
  async keyOf(accountId: string, rawDomain: string): Promise<SenderKey> {
    const domain = normalizeDomainName(rawDomain);
    try {
      return await this.cache.get(
        cacheKey(accountId, domain),
        () => this.ask(accountId, domain),
        (value) => Math.min(value.cacheTtlMs, this.config.SENDER_CACHE_MAX_TTL_MS),
      );
    } catch (error) {
      if (error instanceof CodedError && error.hasCode(DomainsErrorCode.DomainNotFound)) {
        throw new SenderDomainGoneError(domain);
      }
      throw error;
    }
  }

  private async ask(
    accountId: string,
    domain: string,
  ): Promise<SenderKey & { cacheTtlMs: number }> {
    const reply = await this.rpc.request(
      DomainsSubjects.authorizeSender,
      { account_id: accountId, domain },
      { timeoutMs: this.config.RPC_TIMEOUT_MS },
    );
    return {
      domain: reply.domain,
      selector: reply.dkim.selector,
      privateKey: createPrivateKey(reply.dkim.private_key_pem),
      returnPathHost: reply.return_path_host,
      cacheTtlMs: reply.cache_ttl_ms,
    };
  }
}

function cacheKey(accountId: string, domain: string): string {
  return `${accountId}|${normalizeDomainName(domain)}`;
}
