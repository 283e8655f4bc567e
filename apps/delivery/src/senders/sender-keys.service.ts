import { createPrivateKey, type KeyObject } from 'node:crypto';

import { type DomainAnswerCache, DomainsClient } from '@envoi/clients-domains';
import { CodedError, normalizeDomainName } from '@envoi/contracts-core';
import { DomainsErrorCode, DomainsSubjects } from '@envoi/contracts-domains';
import { RpcClient } from '@envoi/shared-nats';
import { Injectable } from '@nestjs/common';

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

type CachedSenderKey = SenderKey & { cacheTtlMs: number };

/**
 * DKIM keys and return-path hosts of sender domains, from the domains service (only this service
 * asks for keys): one cache entry per domain, kept as long as the answers say (bounded by
 * SENDER_CACHE_MAX_TTL_MS), dropped at once when the domain changes (a key rotation among others)
 * or goes away. Concurrent lookups of one domain share one request.
 */
@Injectable()
export class SenderKeys {
  private readonly cache: DomainAnswerCache<CachedSenderKey>;

  constructor(
    private readonly rpc: RpcClient,
    domains: DomainsClient,
  ) {
    this.cache = domains.createCache((key) => key.cacheTtlMs);
  }

  /** The domain's key; SenderDomainGoneError when it was deleted; bus errors as they are. */
  async keyOf(accountId: string, domain: string): Promise<SenderKey> {
    try {
      return await this.cache.get(accountId, domain, (name) => this.ask(accountId, name));
    } catch (error) {
      if (error instanceof CodedError && error.hasCode(DomainsErrorCode.DomainNotFound)) {
        throw new SenderDomainGoneError(normalizeDomainName(domain));
      }
      throw error;
    }
  }

  private async ask(accountId: string, domain: string): Promise<CachedSenderKey> {
    const request = { account_id: accountId, domain };
    const [authorization, key] = await Promise.all([
      this.rpc.request(DomainsSubjects.authorizeSender, request),
      this.rpc.request(DomainsSubjects.getDkimSigningKey, request),
    ]);
    return {
      domain: key.domain,
      selector: key.selector,
      privateKey: createPrivateKey(key.private_key_pem),
      returnPathHost: authorization.return_path_host,
      cacheTtlMs: Math.min(authorization.cache_ttl_ms, key.cache_ttl_ms),
    };
  }
}
