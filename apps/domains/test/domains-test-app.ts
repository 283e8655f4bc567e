import { randomBytes, randomUUID } from 'node:crypto';

import type { StreamSubject } from '@envoi/contracts-core';
import {
  type CreateDomainBody,
  type DnsRecord,
  type DomainRecord,
  DomainsSubjects,
} from '@envoi/contracts-domains';
import { loadConfig } from '@envoi/shared-config';
import type { RpcClient } from '@envoi/shared-nats';
// The conventions let apps' tests use type:testing libs; eslint.config.mjs does not yet.
import {
  DnsTestServer,
  pollUntil,
  type ServiceHarness,
  startServiceHarness,
} from '@envoi/shared-testing';
import { Module } from '@nestjs/common';
import { DataSource } from 'typeorm';

import { AppModule } from '../src/app.module';
import { runDomainsMigrations } from '../src/database/run-domains-migrations';
import { DomainsConfig, SERVICE_NAME } from '../src/domains.config';

export interface DomainsTestApp extends ServiceHarness {
  rpc: RpcClient;
  dataSource: DataSource;
  dns: DnsTestServer;
  config: DomainsConfig;
  close(): Promise<void>;
}

/**
 * Timings of the service under test: lookups time out quickly, the periodic re-check never comes
 * due on its own during a run (tests make a domain due), and the relay polls often.
 */
const TEST_ENV = {
  DNS_TIMEOUT_MS: '300',
  DNS_TRIES: '1',
  DNS_RECHECK_INTERVAL_MS: String(3_600_000),
  DNS_RECHECK_POLL_MS: '100',
  OUTBOX_RELAY_INTERVAL_MS: '100',
  SPF_INCLUDE_DOMAIN: 'spf.envoi.test',
  RETURN_PATH_TARGET: 'bounces.envoi.test',
  TRACKING_TARGET: 'track.envoi.test',
  INBOUND_MX_HOST: 'mx.envoi.test',
};

/** Starts a DNS server on loopback, migrates the schema and boots the service against them. */
export async function startDomainsService(): Promise<DomainsTestApp> {
  const dns = await DnsTestServer.start();
  const config = loadConfig(DomainsConfig, {
    ...process.env,
    ...TEST_ENV,
    DKIM_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    DNS_SERVERS: dns.address,
  });
  await runDomainsMigrations(config.DATABASE_URL);

  @Module({ imports: [AppModule.forRoot(config)] })
  class DomainsTestModule {}

  const harness = await startServiceHarness(SERVICE_NAME, DomainsTestModule);
  return {
    ...harness,
    dataSource: harness.app.get(DataSource),
    dns,
    config,
    async close() {
      await harness.close();
      await dns.stop();
    },
  };
}

let domainCounter = 0;

/** A domain name no other test uses. */
export function uniqueDomain(prefix = 'd'): string {
  return `${prefix}${++domainCounter}-${randomBytes(4).toString('hex')}.example.test`;
}

/** A fresh account id: the domains service trusts the edge about accounts. */
export function newAccountId(): string {
  return randomUUID();
}

export function createDomain(
  app: DomainsTestApp,
  accountId: string,
  body: Partial<CreateDomainBody> = {},
): Promise<DomainRecord> {
  return app.rpc.request(DomainsSubjects.createDomain, {
    account_id: accountId,
    body: { domain: uniqueDomain(), ...body },
  });
}

export function recordOf(domain: DomainRecord, label: string): DnsRecord {
  const record = domain.dns_records.find((candidate) => candidate.label === label);
  if (!record) throw new Error(`no ${label} record in ${domain.domain}`);
  return record;
}

/** Publishes the records of the domain as shown, except those listed. */
export function publish(app: DomainsTestApp, domain: DomainRecord, except: string[] = []): void {
  const byHost = new Map<string, DnsRecord[]>();
  for (const record of domain.dns_records) {
    if (record.label !== null && except.includes(record.label)) continue;
    byHost.set(record.host, [...(byHost.get(record.host) ?? []), record]);
  }
  for (const [host, records] of byHost) {
    app.dns.set(
      host,
      records.map((record) => {
        switch (record.type) {
          case 'TXT':
            return { type: 'TXT' as const, value: record.content };
          case 'CNAME':
            return { type: 'CNAME' as const, target: record.content };
          case 'MX': {
            const [priority, exchange] = record.content.split(' ');
            return { type: 'MX' as const, exchange: exchange ?? '', priority: Number(priority) };
          }
        }
      }),
    );
  }
}

export function checkDns(app: DomainsTestApp, domain: DomainRecord): Promise<DomainRecord> {
  return app.rpc.request(DomainsSubjects.checkDns, {
    account_id: domain.account_id,
    domain: domain.domain,
  });
}

export function getDomain(app: DomainsTestApp, domain: DomainRecord): Promise<DomainRecord> {
  return app.rpc.request(DomainsSubjects.getDomain, {
    account_id: domain.account_id,
    domain: domain.domain,
  });
}

/** Lets the next check-dns look up DNS again instead of answering the cached result. */
export async function expireCheckCache(app: DomainsTestApp, domain: DomainRecord): Promise<void> {
  await app.dataSource.query(
    `UPDATE domains.domains SET last_dns_check_at = now() - interval '1 hour' WHERE id = $1`,
    [domain.id],
  );
}

/**
 * Makes the domain due for its periodic re-check and waits until a replica has done it (its next
 * due time moves a re-check interval ahead).
 */
export async function runPeriodicCheck(app: DomainsTestApp, domain: DomainRecord): Promise<void> {
  await app.dataSource.query(
    `UPDATE domains.domains SET next_check_at = now() - interval '1 second' WHERE id = $1`,
    [domain.id],
  );
  await pollUntil(
    () =>
      app.dataSource.query<Array<{ done: boolean }>>(
        `SELECT next_check_at > now() + interval '30 minutes' AS done FROM domains.domains WHERE id = $1`,
        [domain.id],
      ),
    (rows) => rows[0]?.done === true,
    { what: `the periodic check of ${domain.domain}` },
  );
}

export interface StreamMessage<E> {
  event: E;
  msgId: string | undefined;
}

/** Every message of a stream subject so far, oldest first (read with an ordered consumer). */
export async function streamMessages<E>(
  app: DomainsTestApp,
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

export const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
