import { AccountsErrorCode, AccountsSubjects } from '@envoi/contracts-accounts';
import { NATS_CONNECTION, RpcClient, RpcError, subscribeBroadcast } from '@envoi/shared-nats';
import type { Logger } from '@envoi/shared-observability';
import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { NatsConnection, Subscription } from 'nats';

import { GatewayConfig } from '../gateway.config';
import { LOGGER } from '../logger.provider';
import { hashApiKey } from './api-key-secret';
import type { Principal } from './principal';

interface CacheEntry {
  principal: Principal | null;
  expiresAt: number;
}

const MAX_ENTRIES = 10_000;
/** Unknown keys are remembered briefly so a flood of bad keys does not reach the accounts service. */
const NEGATIVE_TTL_MS = 1_000;

/**
 * Verifies API keys through the accounts service and caches the answer briefly. Any replica drops
 * a key at once when the accounts service broadcasts a change, and within the TTL otherwise.
 */
@Injectable()
export class ApiKeyVerifier implements OnModuleInit, OnModuleDestroy {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly hashByKeyId = new Map<string, string>();
  private readonly inFlight = new Map<string, Promise<Principal | null>>();
  private subscription?: Subscription;

  constructor(
    private readonly rpc: RpcClient,
    private readonly config: GatewayConfig,
    @Inject(NATS_CONNECTION) private readonly connection: NatsConnection,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    this.subscription = subscribeBroadcast(
      this.connection,
      AccountsSubjects.apiKeyChanged,
      (event) => this.forget(event.key_id),
      (error) => this.logger.warn({ err: error }, 'api key change event failed'),
    );
  }

  onModuleDestroy(): void {
    this.subscription?.unsubscribe();
  }

  /** The principal for a secret, or null when the key is unknown or deleted. */
  async verify(secret: string, requestId: string): Promise<Principal | null> {
    const hash = hashApiKey(secret);
    const cached = this.cache.get(hash);
    if (cached && cached.expiresAt > Date.now()) return cached.principal;
    const pending = this.inFlight.get(hash);
    if (pending) return pending;
    const lookup = this.lookup(hash, requestId).finally(() => this.inFlight.delete(hash));
    this.inFlight.set(hash, lookup);
    return lookup;
  }

  private async lookup(hash: string, requestId: string): Promise<Principal | null> {
    let principal: Principal | null;
    try {
      const verified = await this.rpc.request(
        AccountsSubjects.verifyApiKey,
        { secret_hash: hash },
        { requestId },
      );
      principal = { ...verified, scopeSet: new Set(verified.scopes) };
    } catch (error) {
      if (error instanceof RpcError && error.hasCode(AccountsErrorCode.InvalidApiKey)) {
        principal = null;
      } else {
        throw error;
      }
    }
    this.remember(hash, principal);
    return principal;
  }

  private remember(hash: string, principal: Principal | null): void {
    const ttl = principal ? this.config.API_KEY_CACHE_TTL_MS : NEGATIVE_TTL_MS;
    if (ttl === 0) return;
    if (this.cache.size >= MAX_ENTRIES) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
    this.cache.set(hash, { principal, expiresAt: Date.now() + ttl });
    if (principal) this.hashByKeyId.set(principal.key_id, hash);
  }

  private forget(keyId: string): void {
    const hash = this.hashByKeyId.get(keyId);
    if (hash === undefined) return;
    this.cache.delete(hash);
    this.hashByKeyId.delete(keyId);
  }
}
