import {
  AccountsSubjects,
  type ApiKeyRecord,
  type CreateAccountRequest,
  type CreatedAccount,
  type CreatedApiKeyRecord,
} from '@envoi/contracts-accounts';
import type { EventSubject } from '@envoi/contracts-core';
import { loadConfig } from '@envoi/shared-config';
import { decodePacket, type NestEventPacket, type RpcClient } from '@envoi/shared-nats';
// The conventions let apps' tests use type:testing libs; eslint.config.mjs does not yet.
import { type ServiceHarness, startServiceHarness } from '@envoi/shared-testing';
import { Module } from '@nestjs/common';
import type { NatsConnection, Subscription } from 'nats';
import { DataSource } from 'typeorm';

import { AccountsConfig, SERVICE_NAME } from '../src/accounts.config';
import { AppModule } from '../src/app.module';
import { runAccountsMigrations } from '../src/database/run-accounts-migrations';

export interface AccountsTestApp extends ServiceHarness {
  rpc: RpcClient;
  dataSource: DataSource;
  /** A fresh account for one test (tests never share accounts). */
  createAccount(overrides?: Partial<CreateAccountRequest>): Promise<CreatedAccount>;
}

let accountCounter = 0;

/** Migrates the accounts schema and boots the service over the real bus and database. */
export async function startAccountsService(): Promise<AccountsTestApp> {
  const config = loadConfig(AccountsConfig);
  await runAccountsMigrations(config.DATABASE_URL);

  @Module({ imports: [AppModule.forRoot(config)] })
  class AccountsTestModule {}

  const harness = await startServiceHarness(SERVICE_NAME, AccountsTestModule);
  return {
    ...harness,
    dataSource: harness.app.get(DataSource),
    createAccount: (overrides = {}) =>
      harness.rpc.request(AccountsSubjects.createAccount, {
        name: `Test account ${++accountCounter}`,
        ...overrides,
      }),
  };
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
