import type { AccountStatus } from '@envoi/contracts-accounts';

/** The statuses of the accounts asked for that exist; the others are left out. */
export type StatusLookup = (accountIds: string[]) => Promise<Map<string, AccountStatus>>;

interface Waiter {
  resolve: (status: AccountStatus) => void;
  reject: (error: unknown) => void;
}

/**
 * Account statuses, each kept for `ttlMs` (0: not kept) and dropped at once by forget(). The
 * lookups started in one turn of the event loop go out as one request, and concurrent lookups of
 * one account share it. An account the answer leaves out (unknown) counts as `active`. An answer
 * for an account forgotten while it was being asked is used once and not kept.
 */
export class AccountStatusCache {
  private readonly entries = new Map<string, { status: AccountStatus; until: number }>();
  private readonly inFlight = new Map<string, Promise<AccountStatus>>();
  private readonly forgottenInFlight = new Set<string>();
  private batch = new Map<string, Waiter>();

  constructor(
    private readonly lookup: StatusLookup,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  statusOf(accountId: string): Promise<AccountStatus> {
    const cached = this.entries.get(accountId);
    if (cached && cached.until > this.now()) return Promise.resolve(cached.status);
    const asked = this.inFlight.get(accountId);
    if (asked) return asked;
    const answer = new Promise<AccountStatus>((resolve, reject) => {
      if (this.batch.size === 0) setImmediate(() => void this.flush());
      this.batch.set(accountId, { resolve, reject });
    });
    this.inFlight.set(accountId, answer);
    return answer;
  }

  forget(accountId: string): void {
    this.entries.delete(accountId);
    if (this.inFlight.has(accountId)) this.forgottenInFlight.add(accountId);
  }

  private async flush(): Promise<void> {
    const batch = this.batch;
    this.batch = new Map();
    const accountIds = [...batch.keys()];
    try {
      const statuses = await this.lookup(accountIds);
      const until = this.now() + this.ttlMs;
      for (const [accountId, waiter] of batch) {
        const status = statuses.get(accountId) ?? 'active';
        if (this.ttlMs > 0 && !this.forgottenInFlight.has(accountId)) {
          this.entries.set(accountId, { status, until });
        }
        waiter.resolve(status);
      }
    } catch (error) {
      for (const waiter of batch.values()) waiter.reject(error);
    } finally {
      for (const accountId of accountIds) {
        this.inFlight.delete(accountId);
        this.forgottenInFlight.delete(accountId);
      }
    }
  }
}
