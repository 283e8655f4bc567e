import { AccountsSubjects } from '@envoi/contracts-accounts';
import { RpcClient } from '@envoi/shared-nats';
import type { Logger } from '@envoi/shared-observability';
import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';

import { GatewayConfig } from '../gateway.config';
import { LOGGER } from '../logger.provider';

/**
 * Remembers when each key was last used and reports them in one batch event per interval, so a
 * request never costs a database write.
 */
@Injectable()
export class KeyUsageRecorder implements OnModuleInit, OnApplicationShutdown {
  private pending = new Map<string, Date>();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly rpc: RpcClient,
    private readonly config: GatewayConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    this.timer = setInterval(() => this.flush(), this.config.API_KEY_USAGE_FLUSH_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
    this.flush();
  }

  record(keyId: string): void {
    this.pending.set(keyId, new Date());
  }

  flush(): void {
    if (this.pending.size === 0) return;
    const uses = [...this.pending].map(([key_id, usedAt]) => ({
      key_id,
      used_at: usedAt.toISOString(),
    }));
    this.pending = new Map();
    try {
      this.rpc.emit(AccountsSubjects.apiKeysUsed, { uses });
    } catch (error) {
      this.logger.warn({ err: error }, 'could not report api key usage');
    }
  }
}
