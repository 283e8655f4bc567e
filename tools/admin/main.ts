import 'reflect-metadata';

import { parseArgs } from 'node:util';

import { AccountsSubjects } from '@envoi/contracts-accounts';
import { connectNats, RpcClient } from '@envoi/shared-nats';
import type { NatsConnection } from 'nats';

import { dataDirectory, readRuntimeInfo } from '../runtime/runtime-files';
import { AccountStatusUsageError, suspendAccount, unsuspendAccount } from './accounts-status';
import { listDeadLetters, replayDeadLetter, ReplayUsageError } from './dead-letters';

const USAGE = `Usage:
  npm run admin -- accounts create --name NAME [--owner-email EMAIL] [--json]
      Creates an account with an API key holding every scope, and prints its id and key.
  npm run admin -- accounts suspend ACCOUNT_ID --reason REASON [--json]
      Suspends the account: its keys get 401 and its mail is held (its sub-accounts' too,
      as parent-suspended). Prints the statuses after the change.
  npm run admin -- accounts unsuspend ACCOUNT_ID [--json]
      Lifts the account's suspension; each sub-account gets back the status it had.
  npm run admin -- dead-letters list [--service NAME] [--json]
      Lists the stream messages the services' consumers gave up on, most recent first.
  npm run admin -- dead-letters replay ID
      Hands a dead letter to its handler again; removed once handled.

Reaches the platform through NATS_URL, or the one \`npm start\` is running.`;

function natsUrl(): string {
  const fromEnv = process.env['NATS_URL'];
  if (fromEnv) return fromEnv;
  const runtime = readRuntimeInfo(dataDirectory());
  if (runtime) return runtime.nats_url;
  throw new Error('the platform is not running here: start it with `npm start` or set NATS_URL');
}

async function withNats(run: (connection: NatsConnection) => Promise<void>): Promise<void> {
  const connection = await connectNats({ servers: natsUrl().split(','), name: 'envoi-admin' });
  try {
    await run(connection);
  } finally {
    await connection.drain();
  }
}

async function createAccount(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      name: { type: 'string' },
      'owner-email': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const name = values.name;
  if (!name) throw new UsageError('--name is required');
  await withNats(async (connection) => {
    const rpc = new RpcClient(connection);
    const created = await rpc.request(AccountsSubjects.createAccount, {
      name,
      ...(values['owner-email'] ? { owner_email: values['owner-email'] } : {}),
    });
    const result = { account_id: created.account.id, api_key: created.api_key.secret_key };
    if (values.json) console.log(JSON.stringify(result));
    else
      console.log(`account ${result.account_id} created\nAPI key (shown once): ${result.api_key}`);
  });
}

class UsageError extends Error {}

async function main(argv: string[]): Promise<void> {
  const [group, command, ...rest] = argv;
  if (group === 'accounts' && command === 'create') return createAccount(rest);
  if (group === 'accounts' && command === 'suspend') {
    return withNats((connection) => suspendAccount(new RpcClient(connection), rest));
  }
  if (group === 'accounts' && command === 'unsuspend') {
    return withNats((connection) => unsuspendAccount(new RpcClient(connection), rest));
  }
  if (group === 'dead-letters' && command === 'list') {
    return withNats((connection) => listDeadLetters(connection, rest));
  }
  if (group === 'dead-letters' && command === 'replay') {
    return withNats((connection) => replayDeadLetter(connection, rest));
  }
  throw new UsageError(
    argv.length === 0 ? 'no command given' : `unknown command: ${argv.join(' ')}`,
  );
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  const usage =
    error instanceof UsageError ||
    error instanceof ReplayUsageError ||
    error instanceof AccountStatusUsageError;
  console.error(usage ? `${message}\n\n${USAGE}` : `admin: ${message}`);
  process.exit(usage ? 2 : 1);
});
