import { createHash } from 'node:crypto';

import type { VerifiedSmtpLogin } from '@envoi/contracts-accounts';

interface CachedLogin {
  login: VerifiedSmtpLogin;
  expiresAt: number;
}

/**
 * Successful SMTP logins of this replica, by username and the SHA-256 of the password (the
 * password itself is never kept), for a short TTL. A change of a credential or of an account's
 * status drops its logins at once, and also voids verifications in flight, whose answer may
 * predate the change.
 */
export class LoginCache {
  private readonly entries = new Map<string, CachedLogin>();
  private generation = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  async login(
    username: string,
    password: string,
    verify: () => Promise<VerifiedSmtpLogin>,
  ): Promise<VerifiedSmtpLogin> {
    const key = `${username}\u0000${createHash('sha256').update(password).digest('hex')}`;
    const cached = this.entries.get(key);
    if (cached && cached.expiresAt > this.now()) return cached.login;
    this.entries.delete(key);
    const startedIn = this.generation;
    const login = await verify();
    if (startedIn === this.generation) this.store(key, login);
    return login;
  }

  forgetCredential(credentialId: string): void {
    this.forget((login) => login.credential_id === credentialId);
  }

  forgetAccounts(accountIds: readonly string[]): void {
    const ids = new Set(accountIds);
    this.forget((login) => ids.has(login.account_id));
  }

  get size(): number {
    return this.entries.size;
  }

  private forget(matches: (login: VerifiedSmtpLogin) => boolean): void {
    this.generation += 1;
    for (const [key, entry] of this.entries) {
      if (matches(entry.login)) this.entries.delete(key);
    }
  }

  private store(key: string, login: VerifiedSmtpLogin): void {
    if (this.ttlMs <= 0 || this.maxEntries <= 0) return;
    while (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
    this.entries.set(key, { login, expiresAt: this.now() + this.ttlMs });
  }
}
