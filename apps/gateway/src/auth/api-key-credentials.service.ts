import {
  AccountsErrorCode,
  AccountsSubjects,
  type VerifiedApiKey,
} from '@envoi/contracts-accounts';
import { ApiKeyVerifier, type CredentialVerifier } from '@envoi/shared-edge';
import { NATS_CONNECTION, RpcClient, RpcError, subscribeBroadcast } from '@envoi/shared-nats';
import type { Logger } from '@envoi/shared-observability';
import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { NatsConnection, Subscription } from 'nats';

import { GatewayConfig } from '../gateway.config';
import { LOGGER } from '../logger.provider';
import type { Principal } from './principal';

/**
 * The gateway's API-key credentials: @envoi/shared-edge's ApiKeyVerifier asking the accounts
 * service, and forgetting a key at once on any replica when the accounts service broadcasts a
 * change of the key or of its account's status (within the TTL otherwise).
 */
@Injectable()
export class ApiKeyCredentials
  implements CredentialVerifier<string, Principal>, OnModuleInit, OnModuleDestroy
{
  private readonly verifier: ApiKeyVerifier;
  private subscriptions: Subscription[] = [];

  constructor(
    private readonly rpc: RpcClient,
    config: GatewayConfig,
    @Inject(NATS_CONNECTION) private readonly connection: NatsConnection,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.verifier = new ApiKeyVerifier((hash, requestId) => this.lookup(hash, requestId), {
      ttlMs: config.API_KEY_CACHE_TTL_MS,
    });
  }

  onModuleInit(): void {
    this.subscriptions = [
      subscribeBroadcast(
        this.connection,
        AccountsSubjects.apiKeyChanged,
        (event) => this.verifier.forget(event.key_id),
        (error) => this.logger.warn({ err: error }, 'api key change event failed'),
      ),
      subscribeBroadcast(
        this.connection,
        AccountsSubjects.accountStatusChanged,
        (event) => event.account_ids.forEach((id) => this.verifier.forgetAccount(id)),
        (error) => this.logger.warn({ err: error }, 'account status change event failed'),
      ),
    ];
  }

  onModuleDestroy(): void {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
  }

  verify(secret: string, requestId: string): Promise<Principal | null> {
    return this.verifier.verify(secret, requestId);
  }

  private async lookup(hash: string, requestId: string): Promise<VerifiedApiKey | null> {
    try {
      return await this.rpc.request(
        AccountsSubjects.verifyApiKey,
        { secret_hash: hash },
        { requestId },
      );
    } catch (error) {
      if (error instanceof RpcError && error.hasCode(AccountsErrorCode.InvalidApiKey)) return null;
      throw error;
    }
  }
}
