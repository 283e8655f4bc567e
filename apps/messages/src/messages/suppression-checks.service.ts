import { SuppressionsSubjects } from '@envoi/contracts-suppressions';
import { RpcClient } from '@envoi/shared-nats';
import { Injectable } from '@nestjs/common';

/** How addresses are compared for suppressions (the suppressions service does the same). */
export function suppressionKey(email: string): string {
  return email.trim().toLowerCase();
}

/** One batched question per send: which recipients are suppressed, and why. */
@Injectable()
export class SuppressionChecks {
  constructor(private readonly rpc: RpcClient) {}

  /** Reasons by suppressionKey() of each suppressed address (`''` when it has none). */
  async suppressed(
    accountId: string,
    domain: string,
    emails: readonly string[],
  ): Promise<Map<string, string>> {
    const distinct = [...new Map(emails.map((email) => [suppressionKey(email), email])).values()];
    if (distinct.length === 0) return new Map();
    const result = await this.rpc.request(SuppressionsSubjects.check, {
      account_id: accountId,
      domain,
      emails: distinct,
    });
    return new Map(result.suppressed.map((entry) => [suppressionKey(entry.email), entry.reason]));
  }
}
