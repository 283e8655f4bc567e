import { SuppressionsSubjects } from '@envoi/contracts-suppressions';
import {
  BroadcastDroppedCache,
  NATS_CONNECTION,
  RpcClient,
  RpcError,
  subscribeBroadcast,
} from '@envoi/shared-nats';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { NatsConnection, Subscription } from 'nats';

import { MessagesConfig } from '../messages.config';
import { SuppressionSnapshot } from './suppression-snapshot';

const MAX_ACCOUNTS = 1_000;

/**
 * Each account's unexpired suppressions, read whole and reused for SUPPRESSION_CACHE_TTL_MS, so
 * that a send's suppression check asks nothing: the suppressions service broadcasts every change
 * once it has committed and before it answers, and each replica drops the account's snapshot (a
 * lookup in flight included), the TTL bounding a lost broadcast. An account with more than
 * SUPPRESSION_CACHE_MAX_PER_ACCOUNT suppressions has none (null): its sends are checked one by one.
 */
@Injectable()
export class SuppressionSnapshots extends BroadcastDroppedCache<SuppressionSnapshot | null> {
  private readonly logger = new Logger(SuppressionSnapshots.name);

  constructor(
    private readonly rpc: RpcClient,
    private readonly config: MessagesConfig,
    @Inject(NATS_CONNECTION) private readonly connection: NatsConnection,
  ) {
    super(MAX_ACCOUNTS);
  }

  protected listen(drop: (accountId: string) => void): Subscription[] {
    return [
      subscribeBroadcast(
        this.connection,
        SuppressionsSubjects.changed,
        (event) => drop(event.account_id),
        (error) => this.logger.warn(`suppression change broadcast: ${String(error)}`),
      ),
    ];
  }

  /**
   * The account's snapshot; null when it has too many suppressions or snapshots are off, or when
   * it could not be read (then kept as null for the TTL too: its sends are checked one by one
   * meanwhile, rather than each asking for a snapshot first).
   */
  of(accountId: string): Promise<SuppressionSnapshot | null> {
    const ttl = this.config.SUPPRESSION_CACHE_TTL_MS;
    if (ttl === 0) return Promise.resolve(null);
    return this.cache.get(
      accountId,
      () => this.read(accountId),
      () => ttl,
    );
  }

  private async read(accountId: string): Promise<SuppressionSnapshot | null> {
    try {
      const { suppressions } = await this.rpc.request(SuppressionsSubjects.snapshot, {
        account_id: accountId,
        max: this.config.SUPPRESSION_CACHE_MAX_PER_ACCOUNT,
      });
      return suppressions === null ? null : new SuppressionSnapshot(suppressions);
    } catch (error) {
      if (!(error instanceof RpcError)) throw error;
      this.logger.warn(`the suppressions of account ${accountId} not read whole: ${error.message}`);
      return null;
    }
  }
}
