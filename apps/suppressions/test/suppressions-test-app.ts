import { randomBytes, randomUUID } from 'node:crypto';

import type { StreamSubject } from '@envoi/contracts-core';
import { type DomainRecord, DomainsSubjects } from '@envoi/contracts-domains';
import {
  type CreateSuppressionBody,
  type SuppressionRecord,
  SuppressionsSubjects,
} from '@envoi/contracts-suppressions';
import { loadConfig } from '@envoi/shared-config';
import { type RpcClient, StreamConsumers } from '@envoi/shared-nats';
// The conventions let apps' tests use type:testing libs; eslint.config.mjs does not yet.
import { IsolatedPlatform, type ServiceHarness, startServiceHarness } from '@envoi/shared-testing';
import { Module } from '@nestjs/common';
import { DataSource } from 'typeorm';

import { AppModule } from '../src/app.module';
import { runSuppressionsMigrations } from '../src/database/run-suppressions-migrations';
import { SERVICE_NAME, SuppressionsConfig } from '../src/suppressions.config';

export interface SuppressionsTestApp extends ServiceHarness {
  rpc: RpcClient;
  dataSource: DataSource;
  config: SuppressionsConfig;
  /** A domain of the account, created through the real domains service. */
  createDomain(accountId: string, name?: string): Promise<DomainRecord>;
}

/**
 * Timings of the service under test: the periodic purge never runs on its own during a run (tests
 * call it), its batches are small so that its bound shows, and the relay polls often.
 */
const TEST_ENV = {
  SUPPRESSION_PURGE_INTERVAL_MS: String(3_600_000),
  SUPPRESSION_PURGE_BATCH: '2',
  SUPPRESSION_AUTOMATIC_TTL_MS: String(30 * 86_400_000),
  OUTBOX_RELAY_INTERVAL_MS: '100',
};

/**
 * Boots, on a private bus and database, the real domains service (a process, from the build: the
 * domain filters ask it which domains an account owns) and the suppressions service under test
 * (in this process, migrated first). SUPPRESSIONS_INT_KEEP_LOGS keeps the platform's logs.
 */
export async function startSuppressionsService(): Promise<SuppressionsTestApp> {
  await IsolatedPlatform.build();
  const platform = await IsolatedPlatform.start({ owner: 'suppressions' });
  try {
    await platform.startService('domains', platform.offlineDomainsEnv());
    const config = loadConfig(SuppressionsConfig, platform.env(TEST_ENV));
    await runSuppressionsMigrations(config.DATABASE_URL);

    @Module({ imports: [AppModule.forRoot(config)] })
    class SuppressionsTestModule {}

    // The harness connects to NATS_URL: this test file's own copy of the environment.
    process.env['NATS_URL'] = platform.natsUrl;
    const harness = await startServiceHarness(SERVICE_NAME, SuppressionsTestModule);
    const close = async () => {
      await harness.close();
      await platform.stop();
    };
    try {
      // The consumers of bounces and failures (they wait for the EVENTS stream the relay creates).
      await harness.app.get(StreamConsumers).ready();
    } catch (error) {
      await harness.close();
      throw error;
    }
    return {
      ...harness,
      dataSource: harness.app.get(DataSource),
      config,
      createDomain: (accountId, name = uniqueDomain()) =>
        harness.rpc.request(DomainsSubjects.createDomain, {
          account_id: accountId,
          body: { domain: name },
        }),
      close,
    };
  } catch (error) {
    await platform.stop();
    throw error;
  }
}

/** A fresh account id: the suppressions service trusts the edge about accounts. */
export function newAccountId(): string {
  return randomUUID();
}

let counter = 0;

/** An address no other test uses. */
export function uniqueEmail(prefix = 'r'): string {
  return `${prefix}${++counter}-${randomBytes(4).toString('hex')}@example.test`;
}

/** A domain name no other test uses. */
export function uniqueDomain(prefix = 'd'): string {
  return `${prefix}${++counter}-${randomBytes(4).toString('hex')}.example.test`;
}

/** An RFC 3339 instant `ms` from now. */
export function inFuture(ms = 30 * 86_400_000): string {
  return new Date(Date.now() + ms).toISOString();
}

export function createSuppression(
  app: SuppressionsTestApp,
  accountId: string,
  body: Partial<CreateSuppressionBody> = {},
): Promise<SuppressionRecord> {
  return app.rpc.request(SuppressionsSubjects.create, {
    account_id: accountId,
    body: { email: uniqueEmail(), expires_at: inFuture(), ...body },
  });
}

/** Makes a suppression expired, as if its time had passed. */
export async function expire(
  app: SuppressionsTestApp,
  suppression: SuppressionRecord,
): Promise<void> {
  await app.dataSource.query(
    `UPDATE suppressions.suppressions SET expires_at = now() - interval '1 second' WHERE id = $1`,
    [suppression.id],
  );
}

/** Rows of the account in the table, expired ones included. */
export async function storedRows(app: SuppressionsTestApp, accountId: string): Promise<number> {
  const [row] = await app.dataSource.query<Array<{ count: number }>>(
    'SELECT count(*)::int AS count FROM suppressions.suppressions WHERE account_id = $1',
    [accountId],
  );
  return row?.count ?? 0;
}

export interface StreamMessage<E> {
  event: E;
  msgId: string | undefined;
}

/** Every message of a stream subject so far, oldest first (read with an ordered consumer). */
export async function streamMessages<E>(
  app: SuppressionsTestApp,
  subject: StreamSubject<E>,
): Promise<Array<StreamMessage<E>>> {
  const js = app.connection.jetstream();
  const consumer = await js.consumers.get(subject.stream, { filterSubjects: subject.name });
  const messages: Array<StreamMessage<E>> = [];
  let pending = (await consumer.info()).num_pending;
  for (let read = 0; pending > 0 && read < 10_000; read++) {
    const message = await consumer.next({ expires: 2_000 });
    if (!message) break;
    messages.push({ event: message.json<E>(), msgId: message.headers?.get('Nats-Msg-Id') });
    pending = message.info.pending;
  }
  return messages;
}

/** Asymmetric matchers typed `unknown`: jest types them `any`, which type-aware lint refuses. */
export const anyString: unknown = expect.any(String);
