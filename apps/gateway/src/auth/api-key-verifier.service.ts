import { AccountsErrorCode, AccountsSubjects } from '@envoi/contracts-accounts';
import { TtlCache } from '@envoi/shared-cache';
import { NATS_CONNECTION, RpcClient, RpcError, subscribeBroadcast } from '@envoi/shared-nats';
import type { Logger } from '@envoi/shared-observability';
import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { NatsConnection, Subscription } from 'nats';

import { GatewayConfig } from '../gateway.config';
import { LOGGER } from '../logger.provider';
import { hashApiKey } from './api-key-secret';
import type { Principal } from './principal';

const MAX_ENTRIES = 10_000;
/** Unknown keys are remembered briefly so a flood of bad keys does not reach the accounts service. */
const NEGATIVE_TTL_MS = 1_000;

/**
 * Verifies API keys through the accounts service and caches the answer briefly. Any replica drops
 * a key at once when the accounts service broadcasts a change, and within the TTL otherwise; an
 * answer in flight when a key changes is never kept (the broadcast names the key by id, which a
 * lookup by secret only learns from its answer).
 */
@Injectable()
export class ApiKeyVerifier implements OnModuleInit, OnModuleDestroy {
  private readonly cache = new TtlCache<Principal | null>(MAX_ENTRIES);
  private readonly hashByKeyId = new Map<string, string>();
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
  verify(secret: string, requestId: string): Promise<Principal | null> {
    const hash = hashApiKey(secret);
    return this.cache.get(
      hash,
      () => this.lookup(hash, requestId),
      (principal) => (principal ? this.config.API_KEY_CACHE_TTL_MS : NEGATIVE_TTL_MS),
    );
  }

  private async lookup(hash: string, requestId: string): Promise<Principal | null> {
    try {
      const verified = await this.rpc.request(
        AccountsSubjects.verifyApiKey,
        { secret_hash: hash },
        { requestId },
      );
      this.hashByKeyId.set(verified.key_id, hash);
      return { ...verified, scopeSet: new Set(verified.scopes) };
    } catch (error) {
      if (error instanceof RpcError && error.hasCode(AccountsErrorCode.InvalidApiKey)) return null;
      throw error;
    }
  }

  private forget(keyId: string): void {
    this.cache.discardInFlight();
    const hash = this.hashByKeyId.get(keyId);
    if (hash === undefined) return;
    this.cache.invalidate(hash);
    this.hashByKeyId.delete(keyId);
  }
}
