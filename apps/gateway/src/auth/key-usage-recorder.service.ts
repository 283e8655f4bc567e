import { AccountsSubjects } from '@envoi/contracts-accounts';
import { PeriodicJob } from '@envoi/shared-jobs';
import { RpcClient } from '@envoi/shared-nats';
import type { Logger } from '@envoi/shared-observability';
import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';

import { GatewayConfig } from '../gateway.config';
import { LOGGER } from '../logger.provider';

/**
 * Remembers when each key was last used and reports them in one batch event per interval, so a
 * request never costs a database write.
 */
@Injectable()
export class KeyUsageRecorder implements OnApplicationShutdown {
  private pending = new Map<string, Date>();

  constructor(
    private readonly rpc: RpcClient,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** The uses since the last report are not lost when the replica stops. */
  onApplicationShutdown(): void {
    this.flush();
  }

  record(keyId: string): void {
    this.pending.set(keyId, new Date());
  }

  @PeriodicJob<GatewayConfig>({
    name: 'api key usage report',
    intervalMs: (config) => config.API_KEY_USAGE_FLUSH_MS,
  })
  flushJob(): Promise<void> {
    this.flush();
    return Promise.resolve();
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
