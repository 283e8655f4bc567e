import type { AccountStatus } from '@envoi/contracts-accounts';
import { TtlCache } from '@envoi/shared-cache';

/** The statuses of the accounts asked for that exist; the others are left out. */
export type StatusLookup = (accountIds: string[]) => Promise<Map<string, AccountStatus>>;

const MAX_ENTRIES = 10_000;

interface Waiter {
  resolve: (status: AccountStatus) => void;
  reject: (error: unknown) => void;
}

/**
 * Account statuses in a TtlCache (kept `ttlMs`, 0: not kept; forget() drops an entry and the
 * answer of a lookup in flight). The lookups started in one turn of the event loop go out as one
 * request. An account the answer leaves out (unknown) counts as `active`.
 */
export class AccountStatusCache {
  private readonly cache: TtlCache<AccountStatus>;
  /** Waiters by account (two when one was forgotten and asked again before the flush). */
  private batch = new Map<string, Waiter[]>();

  constructor(
    private readonly lookup: StatusLookup,
    private readonly ttlMs: number,
    now: () => number = Date.now,
  ) {
    this.cache = new TtlCache(MAX_ENTRIES, now);
  }

  statusOf(accountId: string): Promise<AccountStatus> {
    return this.cache.get(
      accountId,
      () => this.inNextBatch(accountId),
      () => this.ttlMs,
    );
  }

  forget(accountId: string): void {
    this.cache.invalidate(accountId);
  }

  private inNextBatch(accountId: string): Promise<AccountStatus> {
    return new Promise((resolve, reject) => {
      if (this.batch.size === 0) setImmediate(() => void this.flush());
      this.batch.set(accountId, [...(this.batch.get(accountId) ?? []), { resolve, reject }]);
    });
  }

  private async flush(): Promise<void> {
    const batch = this.batch;
    this.batch = new Map();
    try {
      const statuses = await this.lookup([...batch.keys()]);
      for (const [accountId, waiters] of batch) {
        for (const waiter of waiters) waiter.resolve(statuses.get(accountId) ?? 'active');
      }
    } catch (error) {
      for (const waiter of [...batch.values()].flat()) waiter.reject(error);
    }
  }
}
