import { randomUUID } from 'node:crypto';

import { AccountsSubjects, type CreatedAccount } from '@envoi/contracts-accounts';
import { RpcClient } from '@envoi/shared-nats';
import { connect, type NatsConnection } from 'nats';

import { KeyClient } from './api-client';
import { e2eEnvironment } from './environment';

let connection: NatsConnection | undefined;

/** The bus, for what the public API does not offer (yet). */
export async function rpc(): Promise<RpcClient> {
  connection ??= await connect({ servers: e2eEnvironment().natsUrl.split(','), name: 'e2e' });
  return new RpcClient(connection);
}

export async function closeSessions(): Promise<void> {
  await connection?.drain();
  connection = undefined;
}

export interface AccountSession {
  accountId: string;
  created: CreatedAccount;
  /** Client with the account's full-access key. */
  api: KeyClient;
  /** `/v2/accounts/<id>` + suffix. */
  path(suffix?: string): string;
}

/**
 * A fresh account per test, created the way the admin command does (over the bus); a sub-account
 * of `parentAccountId` when given; its owner without an email address unless `ownerEmail`.
 */
export async function createAccountSession(
  name = `e2e-${randomUUID().slice(0, 8)}`,
  parentAccountId?: string,
  ownerEmail?: string,
): Promise<AccountSession> {
  const created = await (
    await rpc()
  ).request(AccountsSubjects.createAccount, {
    name,
    ...(parentAccountId ? { parent_account_id: parentAccountId } : {}),
    ...(ownerEmail ? { owner_email: ownerEmail } : {}),
  });
  const accountId = created.account.id;
  return {
    accountId,
    created,
    api: new KeyClient(created.api_key.secret_key),
    path: (suffix = '') => `/v2/accounts/${accountId}${suffix}`,
  };
}

/** Creates a key with the given scopes (and allow list) through the public API. */
export async function createKey(
  session: AccountSession,
  scopes: string[],
  ipAllowList?: string[],
): Promise<{ id: string; client: KeyClient }> {
  const response = await session.api.post<{ id: string; secret_key: string }>(
    session.path('/api-keys'),
    {
      label: `key-${randomUUID().slice(0, 8)}`,
      scopes,
      ...(ipAllowList ? { ip_allow_list: ipAllowList } : {}),
    },
  );
  if (response.status !== 201)
    throw new Error(`key creation failed: ${response.status} ${response.text}`);
  return { id: response.body.id, client: new KeyClient(response.body.secret_key) };
}
