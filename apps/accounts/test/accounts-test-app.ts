import { randomBytes } from 'node:crypto';

import {
  AccountsSubjects,
  type ApiKeyRecord,
  type CreateAccountRequest,
  type CreatedAccount,
  type CreatedApiKeyRecord,
} from '@envoi/contracts-accounts';
import type { EventSubject } from '@envoi/contracts-core';
import { type DomainRecord, DomainsSubjects } from '@envoi/contracts-domains';
import { loadConfig } from '@envoi/shared-config';
import {
  decodePacket,
  type NestEventPacket,
  type RpcClient,
  StreamConsumers,
} from '@envoi/shared-nats';
// The conventions let apps' tests use type:testing libs; eslint.config.mjs does not yet.
import { type ServiceHarness, startServiceHarness } from '@envoi/shared-testing';
import { Module } from '@nestjs/common';
import type { NatsConnection, Subscription } from 'nats';
import { DataSource } from 'typeorm';

import { AccountsConfig, SERVICE_NAME } from '../src/accounts.config';
import { AppModule } from '../src/app.module';
import { runAccountsMigrations } from '../src/database/run-accounts-migrations';
import { IsolatedPlatform } from './isolated-platform';

export interface AccountsTestApp extends ServiceHarness {
  rpc: RpcClient;
  dataSource: DataSource;
  config: AccountsConfig;
  /** A fresh account for one test (tests never share accounts). */
  createAccount(overrides?: Partial<CreateAccountRequest>): Promise<CreatedAccount>;
  /** A domain of the account, created through the real domains service. */
  createDomain(accountId: string, name?: string): Promise<DomainRecord>;
  deleteDomain(domain: DomainRecord): Promise<void>;
  /** Stops the domains service (by its PID), and starts it again. */
  stopDomains(): Promise<void>;
  startDomains(): Promise<void>;
}

/**
 * Timings compressed for tests: failed events come back quickly.
 */
const ACCOUNTS_TEST_ENV = {
  EVENTS_RETRY_MS: '50',
  EVENTS_ACK_WAIT_MS: '5000',
  DOMAINS_RPC_TIMEOUT_MS: '3000',
};

let accountCounter = 0;
let domainCounter = 0;

/** A domain name no other test uses. */
export function uniqueDomain(prefix = 'd'): string {
  return `${prefix}${++domainCounter}-${randomBytes(4).toString('hex')}.example.test`;
}

async function within<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} took over ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Boots, on a private bus and database, the real domains service (a process, from the build) and
 * the accounts service (in this process, migrated first, with `env` over the test settings), and
 * waits until the accounts service consumes domain events.
 */
export async function startAccountsService(
  env: Readonly<Record<string, string>> = {},
): Promise<AccountsTestApp> {
  await IsolatedPlatform.build();
  const platform = await IsolatedPlatform.start();
  try {
    const domainsEnv = platform.offlineDomainsEnv();
    let domains = await platform.startService('domains', domainsEnv);

    const config = loadConfig(AccountsConfig, platform.env({ ...ACCOUNTS_TEST_ENV, ...env }));
    await runAccountsMigrations(config.DATABASE_URL);

    @Module({ imports: [AppModule.forRoot(config)] })
    class AccountsTestModule {}

    // The harness connects to NATS_URL: this test file's own copy of the environment.
    process.env['NATS_URL'] = platform.natsUrl;
    const harness = await startServiceHarness(SERVICE_NAME, AccountsTestModule);
    const close = async () => {
      await harness.close();
      await platform.stop();
    };
    try {
      await within(harness.app.get(StreamConsumers).ready(), 20_000, 'the domain events consumer');
    } catch (error) {
      await harness.close();
      throw error;
    }
    return {
      ...harness,
      dataSource: harness.app.get(DataSource),
      config,
      createAccount: (overrides = {}) =>
        harness.rpc.request(AccountsSubjects.createAccount, {
          name: `Test account ${++accountCounter}`,
          ...overrides,
        }),
      createDomain: (accountId, name = uniqueDomain()) =>
        harness.rpc.request(DomainsSubjects.createDomain, {
          account_id: accountId,
          body: { domain: name },
        }),
      deleteDomain: async (domain) => {
        await harness.rpc.request(DomainsSubjects.deleteDomain, {
          account_id: domain.account_id,
          domain: domain.domain,
        });
      },
      stopDomains: () => domains.stop(),
      startDomains: async () => {
        domains = await platform.startService('domains', domainsEnv);
      },
      close,
    };
  } catch (error) {
    await platform.stop();
    throw error;
  }
}

/** Records every event published on a subject (no queue group, like a gateway replica). */
export class EventRecorder<E> {
  readonly events: E[] = [];
  private readonly subscription: Subscription;

  constructor(connection: NatsConnection, subject: EventSubject<E>) {
    this.subscription = connection.subscribe(subject.name, {
      callback: (error, message) => {
        if (!error) this.events.push(decodePacket<NestEventPacket<E>>(message.data).data);
      },
    });
  }

  stop(): void {
    this.subscription.unsubscribe();
  }
}

export const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

/** Asymmetric matchers typed `unknown`: jest types them `any`, which type-aware lint refuses. */
export const anyString: unknown = expect.any(String);

export function stringMatching(pattern: RegExp): unknown {
  return expect.stringMatching(pattern);
}

/** The record as get/list/update return it: the create response minus the one-time secret. */
export function withoutSecret(key: CreatedApiKeyRecord): ApiKeyRecord {
  const record: Partial<CreatedApiKeyRecord> = { ...key };
  delete record.secret_key;
  return record as ApiKeyRecord;
}
