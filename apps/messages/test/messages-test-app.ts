import { randomBytes } from 'node:crypto';

import { AccountsSubjects, type CreatedAccount } from '@envoi/contracts-accounts';
import { DELIVERY_STREAM, EVENTS_STREAM } from '@envoi/contracts-core';
import {
  type CreateDomainBody,
  type DomainRecord,
  DomainsSubjects,
} from '@envoi/contracts-domains';
import {
  type AnyDeliveryJob,
  type CreateMessageBody,
  type CreateMessageResult,
  type MessageReceptionBatchEvent,
  type MessageReceptionEvent,
  MessagesStreamSubjects,
  MessagesSubjects,
  type MessageSuppressedAtAcceptEvent,
} from '@envoi/contracts-messages';
import { SuppressionsSubjects } from '@envoi/contracts-suppressions';
import { loadConfig } from '@envoi/shared-config';
import {
  configureServiceTransport,
  connectNats,
  natsMicroserviceOptions,
  RpcClient,
  StreamConsumers,
} from '@envoi/shared-nats';
import { createLogger } from '@envoi/shared-observability';
// The conventions let apps' tests use type:testing libs; eslint.config.mjs does not yet.
import { DnsTestServer, pollUntil } from '@envoi/shared-testing';
import { type INestMicroservice, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  AckPolicy,
  type ConsumerMessages,
  DeliverPolicy,
  type JsMsg,
  type NatsConnection,
} from 'nats';
import { DataSource } from 'typeorm';

import { AppModule } from '../src/app.module';
import { runMessagesMigrations } from '../src/database/run-messages-migrations';
import { MessagesConfig, SERVICE_NAME } from '../src/messages.config';
import { IsolatedPlatform } from './isolated-platform';

/** Something a stream delivered, and when this test process received it. */
export interface Received<T> {
  value: T;
  /** The stream message's `Nats-Msg-Id` (a batch's, for an event that came in one). */
  msgId: string | undefined;
  /** For an event of a `message.reception_batch`: the batch's id and its number of events. */
  batch?: { msgId: string | undefined; size: number };
  receivedAt: number;
}

/** Everything a stream subject delivers from the start, kept in arrival order. */
export class StreamCollector<T> {
  readonly received: Array<Received<T>> = [];

  private constructor(
    private readonly messages: ConsumerMessages,
    private readonly skipped: ReadonlySet<string>,
  ) {}

  /**
   * Reads with a durable consumer that acknowledges each message: on a work queue that removes
   * it (this collector stands in for the delivery workers). Messages of `skippedSubjects` are
   * acknowledged, not kept.
   */
  static async start<T>(
    connection: NatsConnection,
    stream: string,
    subject: string,
    skippedSubjects: readonly string[] = [],
  ): Promise<StreamCollector<T>> {
    const jsm = await connection.jetstreamManager();
    const durable = `test-${randomBytes(4).toString('hex')}`;
    await jsm.consumers.add(stream, {
      durable_name: durable,
      filter_subject: subject,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
    });
    const consumer = await connection.jetstream().consumers.get(stream, durable);
    const messages = await consumer.consume({ max_messages: 256, expires: 1_000 });
    const collector = new StreamCollector<T>(messages, new Set(skippedSubjects));
    void collector.run();
    return collector;
  }

  of(predicate: (value: T) => boolean): Array<Received<T>> {
    return this.received.filter((entry) => predicate(entry.value));
  }

  stop(): void {
    this.messages.stop();
  }

  private async run(): Promise<void> {
    for await (const message of this.messages) this.take(message);
  }

  /** A `message.reception_batch` is kept as its events, each on its own. */
  private take(message: JsMsg): void {
    if (this.skipped.has(message.subject)) {
      message.ack();
      return;
    }
    const msgId = message.headers?.get('Nats-Msg-Id');
    const receivedAt = Date.now();
    if (message.subject === MessagesStreamSubjects.receptionBatch.name) {
      const { events } = message.json<MessageReceptionBatchEvent>().data;
      const batch = { msgId, size: events.length };
      for (const event of events) {
        this.received.push({ value: event as T, msgId, batch, receivedAt });
      }
    } else {
      this.received.push({ value: message.json<T>(), msgId, receivedAt });
    }
    message.ack();
  }
}

export type SendEvent = MessageReceptionEvent | MessageSuppressedAtAcceptEvent;

export interface MessagesTestApp {
  platform: IsolatedPlatform;
  app: INestMicroservice;
  config: MessagesConfig;
  rpc: RpcClient;
  connection: NatsConnection;
  /** The messages service's DataSource (the private database, every schema). */
  dataSource: DataSource;
  dns: DnsTestServer;
  jobs: StreamCollector<AnyDeliveryJob>;
  /**
   * The events of sends: receptions and suppressed recipients (`events.message.>` but the
   * send receptions, which sends no longer publish).
   */
  events: StreamCollector<SendEvent>;
  close(): Promise<void>;
}

/** Where the messages under test point their tracking pixels and links. */
export const TRACKING_TEST_BASE_URL = 'https://track.envoi.test';

/**
 * Timings that keep tests short: the relay polls every 100 ms (so does scheduling); a delivery
 * event that failed comes back after 50 ms (then 100, 200, …).
 */
export const MESSAGES_TEST_ENV = {
  OUTBOX_RELAY_INTERVAL_MS: '100',
  EVENTS_RETRY_MS: '50',
  RETENTION_PURGE_INTERVAL_MS: '3600000',
  ACCOUNT_CACHE_TTL_MS: '0',
  TRACKING_BASE_URL: TRACKING_TEST_BASE_URL,
  TRACKING_SECRET: 'tracking-secret-for-the-messages-integration-tests',
};

/**
 * The real accounts, domains and suppressions services (processes from dist/) and the messages
 * service under test (in this process) on a private database and nats-server, with a DNS server
 * on loopback as the domains service's only resolver.
 */
export async function startMessagesService(): Promise<MessagesTestApp> {
  await IsolatedPlatform.build();
  const platform = await IsolatedPlatform.start();
  const dns = await DnsTestServer.start();
  const stops: Array<() => Promise<void>> = [() => dns.stop(), () => platform.stop()];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  };
  try {
    const env = platform.env({
      DKIM_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      DNS_SERVERS: dns.address,
      DNS_TIMEOUT_MS: '300',
      DNS_TRIES: '1',
      DNS_RECHECK_INTERVAL_MS: '3600000',
      OUTBOX_RELAY_INTERVAL_MS: '100',
    });
    await Promise.all(
      ['accounts', 'domains', 'suppressions'].map((name) => platform.startService(name, env)),
    );

    const config = loadConfig(MessagesConfig, platform.env(MESSAGES_TEST_ENV));
    await runMessagesMigrations(config.DATABASE_URL);

    @Module({ imports: [AppModule.forRoot(config)] })
    class MessagesTestModule {}

    const app = await NestFactory.createMicroservice(MessagesTestModule, {
      ...natsMicroserviceOptions(SERVICE_NAME, config.natsServers()),
      logger: false,
    });
    configureServiceTransport(
      app,
      createLogger(SERVICE_NAME, process.env['LOG_LEVEL'] ?? 'silent'),
    );
    await app.listen();
    stops.push(() => app.close());
    const connection = await connectNats({
      servers: config.natsServers(),
      name: `${SERVICE_NAME}-test-client`,
    });
    stops.push(() => connection.drain());

    // The relay creates both streams at its first run; the status machine's consumers follow.
    const jsm = await connection.jetstreamManager();
    await pollUntil(
      async () => {
        await jsm.streams.info(DELIVERY_STREAM);
        await jsm.streams.info(EVENTS_STREAM);
        return true;
      },
      (ok) => ok,
      { what: 'the DELIVERY and EVENTS streams' },
    );
    await app.get(StreamConsumers).ready();
    const jobs = await StreamCollector.start<AnyDeliveryJob>(
      connection,
      DELIVERY_STREAM,
      MessagesStreamSubjects.deliveryJobs.name,
    );
    const events = await StreamCollector.start<SendEvent>(
      connection,
      EVENTS_STREAM,
      'events.message.>',
      [MessagesStreamSubjects.sendReceptions.name],
    );
    stops.push(() => {
      jobs.stop();
      events.stop();
      return Promise.resolve();
    });

    return {
      platform,
      app,
      config,
      rpc: new RpcClient(connection, 30_000),
      connection,
      dataSource: app.get(DataSource),
      dns,
      jobs,
      events,
      close: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

// ---- Fixtures ----

let counter = 0;

export function uniqueDomain(prefix = 'm'): string {
  return `${prefix}${++counter}-${randomBytes(4).toString('hex')}.example.test`;
}

/** A fresh account (real accounts service) for one test. */
export async function createAccount(app: MessagesTestApp): Promise<CreatedAccount> {
  return app.rpc.request(AccountsSubjects.createAccount, { name: `Messages test ${++counter}` });
}

/** Publishes the records of the domain as shown. */
export function publishRecords(app: MessagesTestApp, domain: DomainRecord): void {
  app.dns.publish(domain.dns_records);
}

/** A domain of the account; verified (its records published, then checked) unless told not to. */
export async function createDomain(
  app: MessagesTestApp,
  accountId: string,
  options: { verified?: boolean; body?: Partial<CreateDomainBody> } = {},
): Promise<DomainRecord> {
  const domain = await app.rpc.request(DomainsSubjects.createDomain, {
    account_id: accountId,
    body: { domain: uniqueDomain(), ...options.body },
  });
  if (options.verified === false) return domain;
  publishRecords(app, domain);
  const checked = await app.rpc.request(DomainsSubjects.checkDns, {
    account_id: accountId,
    domain: domain.domain,
  });
  if (!checked.dns_valid) throw new Error(`${domain.domain} did not verify`);
  return checked;
}

/** An account with a verified sending domain. */
export interface Sender {
  accountId: string;
  domain: DomainRecord;
  from: string;
}

export async function newSender(app: MessagesTestApp): Promise<Sender> {
  const { account } = await createAccount(app);
  const domain = await createDomain(app, account.id);
  return { accountId: account.id, domain, from: `hello@${domain.domain}` };
}

export function suppress(
  app: MessagesTestApp,
  accountId: string,
  email: string,
  reason: string,
): Promise<unknown> {
  return app.rpc.request(SuppressionsSubjects.create, {
    account_id: accountId,
    body: {
      email,
      reason,
      expires_at: new Date(Date.now() + 86_400_000).toISOString(),
    },
  });
}

/** A minimal valid body from the sender; override anything. */
export function messageBody(
  sender: Sender,
  overrides: Partial<CreateMessageBody> = {},
): CreateMessageBody {
  return {
    from: { email: sender.from, name: 'Sender' },
    recipients: [{ email: `to-${++counter}@recipient.test`, name: 'Recipient' }],
    subject: 'Hello',
    text_content: 'Hello there',
    ...overrides,
  };
}

export function send(
  app: MessagesTestApp,
  sender: Sender,
  body: CreateMessageBody,
): Promise<CreateMessageResult> {
  return app.rpc.request(MessagesSubjects.createMessage, {
    account_id: sender.accountId,
    api: 'v2',
    body,
  });
}

/** The uuid of a `<uuid@domain>` id. */
export function uuidOf(header: string | null): string {
  const match = /^<([0-9a-f-]{36})@/.exec(header ?? '');
  if (!match?.[1]) throw new Error(`not a message id: ${String(header)}`);
  return match[1];
}

/** Waits until the stream delivered exactly `count` items matching, and returns them. */
export async function collected<T>(
  collector: StreamCollector<T>,
  predicate: (value: T) => boolean,
  count: number,
  timeoutMs = 10_000,
): Promise<Array<Received<T>>> {
  return pollUntil(
    () => collector.of(predicate),
    (items) => items.length >= count,
    { timeoutMs, what: `${count} stream messages` },
  );
}

/** Asymmetric matchers typed `unknown`: jest types them `any`, which type-aware lint refuses. */
export const anyString: unknown = expect.any(String);

export const UNKNOWN_ID = '00000000-0000-7000-8000-000000000000';
