import type { SuppressionSnapshotEntry } from '@envoi/contracts-suppressions';

/** How addresses are compared for suppressions (the suppressions service does the same). */
export function suppressionKey(email: string): string {
  return email.trim().toLowerCase();
}

/** One unexpired suppression of the snapshot: its domain (null: every domain) and reason. */
interface Held {
  domain: string | null;
  reason: string;
  expiresAt: number;
}

/**
 * An account's unexpired suppressions as the suppressions service answered them, by address,
 * answering its send-time check the way the service does: a suppression applies while it is
 * unexpired and its domain is null or the sender domain, the domain's own before the account-wide
 * one.
 */
export class SuppressionSnapshot {
  private readonly byEmail = new Map<string, Held[]>();

  constructor(entries: readonly SuppressionSnapshotEntry[]) {
    for (const entry of entries) {
      const key = suppressionKey(entry.email);
      const held = this.byEmail.get(key) ?? [];
      held.push({
        domain: entry.domain,
        reason: entry.reason,
        expiresAt: Date.parse(entry.expires_at),
      });
      this.byEmail.set(key, held);
    }
  }

  /** The reason of each suppressed address (by suppressionKey) for `domain` (normalised) at `now`. */
  reasons(domain: string, emails: readonly string[], now: number): Map<string, string> {
    const reasons = new Map<string, string>();
    for (const email of emails) {
      const key = suppressionKey(email);
      const live = (this.byEmail.get(key) ?? []).filter((held) => held.expiresAt > now);
      const applying =
        live.find((held) => held.domain === domain) ?? live.find((held) => held.domain === null);
      if (applying) reasons.set(key, applying.reason);
    }
    return reasons;
  }
}
