import { AccountsErrorCode, AccountsSubjects } from '@envoi/contracts-accounts';
import type { RpcClient } from '@envoi/shared-nats';
import { RpcError } from '@envoi/shared-nats';

import { type DevAccount, readDevAccount, writeDevAccount } from '../runtime/runtime-files';

/**
 * The development account: created on first run with a key holding every scope, reused after
 * (its key is only ever known from the file, since the platform stores only its hash).
 */
export async function ensureDevAccount(
  rpc: RpcClient,
  dataDir: string,
  endpoints: Pick<DevAccount, 'base_url' | 'health' | 'smtp_submission' | 'smtp_mx'>,
): Promise<DevAccount> {
  const existing = readDevAccount(dataDir);
  if (existing) {
    try {
      await rpc.request(AccountsSubjects.getAccount, { account_id: existing.account_id });
      const account = { ...existing, ...endpoints };
      writeDevAccount(dataDir, account);
      return account;
    } catch (error) {
      if (!(error instanceof RpcError && error.hasCode(AccountsErrorCode.AccountNotFound)))
        throw error;
    }
  }
  const created = await rpc.request(AccountsSubjects.createAccount, { name: 'Development' });
  const account: DevAccount = {
    ...endpoints,
    account_id: created.account.id,
    api_key: created.api_key.secret_key,
  };
  writeDevAccount(dataDir, account);
  return account;
}
