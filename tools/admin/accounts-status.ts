import { parseArgs } from 'node:util';

import { AccountsSubjects, type AccountStatusRecord } from '@envoi/contracts-accounts';
import type { RpcClient } from '@envoi/shared-nats';

/** A mistake in the command line (the usage text follows it). */
export class AccountStatusUsageError extends Error {}

/** The statuses after the change, one line per account. */
export function formatStatuses(record: AccountStatusRecord): string {
  return [
    `account ${record.account_id}: ${record.status}`,
    ...record.sub_accounts.map((child) => `  sub-account ${child.account_id}: ${child.status}`),
  ].join('\n');
}

function print(record: AccountStatusRecord, json: boolean | undefined): void {
  console.log(json ? JSON.stringify(record) : formatStatuses(record));
}

/** `accounts suspend <account_id> --reason "…" [--json]`. */
export async function suspendAccount(rpc: RpcClient, args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { reason: { type: 'string' }, json: { type: 'boolean', default: false } },
    strict: true,
  });
  const accountId = onlyAccountId(positionals);
  const reason = values.reason?.trim();
  if (!reason) throw new AccountStatusUsageError('--reason is required');
  print(
    await rpc.request(AccountsSubjects.suspendAccount, { account_id: accountId, reason }),
    values.json,
  );
}

/** `accounts unsuspend <account_id> [--json]`. */
export async function unsuspendAccount(rpc: RpcClient, args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { json: { type: 'boolean', default: false } },
    strict: true,
  });
  const accountId = onlyAccountId(positionals);
  print(
    await rpc.request(AccountsSubjects.unsuspendAccount, { account_id: accountId }),
    values.json,
  );
}

function onlyAccountId(positionals: string[]): string {
  const [accountId, ...extra] = positionals;
  if (!accountId || extra.length > 0) {
    throw new AccountStatusUsageError('exactly one account id is required');
  }
  return accountId;
}
