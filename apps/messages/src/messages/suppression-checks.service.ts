import { CHECK_EMAILS_MAX, SuppressionsSubjects } from '@envoi/contracts-suppressions';
import { RpcClient } from '@envoi/shared-nats';
import { Injectable } from '@nestjs/common';

import { KeyedBatches } from './keyed-batches';
import { suppressionKey } from './suppression-snapshot';
import { SuppressionSnapshots } from './suppression-snapshots.service';

export { suppressionKey } from './suppression-snapshot';

/** Reasons by suppressionKey() of each suppressed address (`''` when it has none). */
type Reasons = Map<string, string>;

/** The sender an address is checked for: its account and domain (a UUID never holds a NUL). */
function senderKey(accountId: string, domain: string): string {
  return `${accountId}\u0000${domain}`;
}

function senderOf(key: string): { accountId: string; domain: string } {
  const at = key.indexOf('\u0000');
  return { accountId: key.slice(0, at), domain: key.slice(at + 1) };
}

function distinctAddresses(emails: readonly string[]): string[] {
  return [...new Map(emails.map((email) => [suppressionKey(email), email])).values()];
}

/**
 * Answered from the account's snapshot when it has one (see SuppressionSnapshots); otherwise one
 * batched question per send: which recipients are suppressed, and why. Sends of one account
 * and domain that ask while its question is in flight are asked together once it ends (see
 * KeyedBatches): concurrent sends share a round trip, and none is answered from a question asked
 * before it.
 */
@Injectable()
export class SuppressionChecks {
  private readonly checks = new KeyedBatches<string, Reasons>(
    (key, emails) => this.check(key, emails),
    CHECK_EMAILS_MAX,
  );

  constructor(
    private readonly rpc: RpcClient,
    private readonly snapshots: SuppressionSnapshots,
  ) {}

  async suppressed(
    accountId: string,
    domain: string,
    emails: readonly string[],
  ): Promise<Map<string, string>> {
    const distinct = distinctAddresses(emails);
    if (distinct.length === 0) return new Map();
    const snapshot = await this.snapshots.of(accountId);
    if (snapshot) return snapshot.reasons(domain, distinct, Date.now());
    const reasons = await this.checks.submit(senderKey(accountId, domain), distinct);
    const own = new Map<string, string>();
    for (const email of distinct) {
      const reason = reasons.get(suppressionKey(email));
      if (reason !== undefined) own.set(suppressionKey(email), reason);
    }
    return own;
  }

  private async check(key: string, emails: readonly string[]): Promise<Reasons> {
    const { accountId, domain } = senderOf(key);
    const result = await this.rpc.request(SuppressionsSubjects.check, {
      account_id: accountId,
      domain,
      emails: distinctAddresses(emails),
    });
    return new Map(result.suppressed.map((entry) => [suppressionKey(entry.email), entry.reason]));
  }
}
