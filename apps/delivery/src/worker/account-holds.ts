import { AccountsSubjects } from '@envoi/contracts-accounts';
import { NATS_CONNECTION, RpcClient, subscribeBroadcast } from '@envoi/shared-nats';
import {
  Inject,
  Injectable,
  Logger,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import type { NatsConnection, Subscription } from 'nats';

import { DeliveryConfig } from '../delivery.config';
import { AccountStatusCache } from './account-status-cache';
import type { Settlement } from './chunk-settlement';

/**
 * Holds the mail of accounts that are not active (suspended, parent-suspended, deleted): their
 * jobs are handed back every DELIVERY_SUSPENDED_RECHECK_MS before anything else is done, so no
 * attempt is used up, no status changes and nothing is recorded; they go out once the account is
 * active again. Holding does not age a message: the maximum age runs from its first attempt,
 * which a held message has not started, and is only checked when a failed attempt asks for a
 * retry (`schedule.expires`, the sender's own deadline, still applies). Statuses come from the
 * accounts service, kept ACCOUNT_STATUS_CACHE_TTL_MS and dropped at once when it announces a
 * change; a failed lookup throws (the job is retried soon), so the mail of a suspended account is
 * never sent for want of an answer.
 */
@Injectable()
export class AccountHolds implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(AccountHolds.name);
  private readonly statuses: AccountStatusCache;
  private subscription: Subscription | undefined;

  constructor(
    rpc: RpcClient,
    @Inject(NATS_CONNECTION) private readonly connection: NatsConnection,
    private readonly config: DeliveryConfig,
  ) {
    this.statuses = new AccountStatusCache(async (accountIds) => {
      const answer = await rpc.request(AccountsSubjects.accountStatuses, {
        account_ids: accountIds,
      });
      return new Map(answer.statuses.map((entry) => [entry.account_id, entry.status]));
    }, config.ACCOUNT_STATUS_CACHE_TTL_MS);
  }

  onModuleInit(): void {
    this.subscription = subscribeBroadcast(
      this.connection,
      AccountsSubjects.accountStatusChanged,
      (event) => event.account_ids.forEach((accountId) => this.statuses.forget(accountId)),
      (error) => this.logger.warn(`account status change event failed: ${String(error)}`),
    );
  }

  onModuleDestroy(): void {
    this.subscription?.unsubscribe();
  }

  /** A hand-back while the account is not active; null when its mail may go. */
  async holdOf(accountId: string): Promise<Settlement | null> {
    const status = await this.statuses.statusOf(accountId);
    if (status === 'active') return null;
    return {
      kind: 'nak',
      delayMs: this.config.DELIVERY_SUSPENDED_RECHECK_MS,
      note: `held: the account is ${status}`,
    };
  }
}
