import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:net';

import { DELIVERY_STREAM, EVENTS_STREAM } from '@envoi/contracts-core';
import { type DeliveryOutcomeEvent, OUTCOME_BATCH_TYPE } from '@envoi/contracts-delivery';
import { type DomainRecord, DomainsSubjects } from '@envoi/contracts-domains';
import {
  type DeliveryBatchJob,
  type DeliveryJob,
  type DeliveryView,
  type DeliveryViewsV2,
  MessagesErrorCode,
  MessagesStreamSubjects,
  MessagesSubjects,
} from '@envoi/contracts-messages';
import { loadConfig } from '@envoi/shared-config';
import {
  configureServiceTransport,
  connectNats,
  decodeCarriedEvents,
  decodePacket,
  encodePacket,
  natsMicroserviceOptions,
  type NestRequestPacket,
  RpcClient,
} from '@envoi/shared-nats';
import { createLogger } from '@envoi/shared-observability';
// The conventions let apps' tests use type:testing libs; eslint.config.mjs does not yet.
import { DnsTestServer, pollUntil } from '@envoi/shared-testing';
import { SmtpSink } from '@envoi/shared-testing';
import { type INestMicroservice, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AckPolicy, DeliverPolicy, type JsMsg, type NatsConnection, type Subscription } from 'nats';
import { Pool } from 'pg';
import { DataSource } from 'typeorm';

import { AppModule } from '../src/app.module';
import { runDeliveryMigrations } from '../src/database/run-delivery-migrations';
import { DeliveryConfig, SERVICE_NAME } from '../src/delivery.config';
import { SmtpPool } from '../src/smtp/smtp-pool';
import { DeliveryWorker } from '../src/worker/delivery-worker';
import { type ChildHandle, IsolatedPlatform } from './isolated-platform';

/** Timings that keep a run short: retries after 400 ms then 800 ms (no jitter), short timeouts. */
export const TEST_ENV = {
  RETRY_SCHEDULE_MS: '400,800',
  RETRY_JITTER_RATIO: '0',
  MAX_MESSAGE_AGE_MS: '60000',
  DELIVERY_ACK_WAIT_MS: '3000',
  OUTBOX_RELAY_INTERVAL_MS: '50',
  SMTP_CONNECT_TIMEOUT_MS: '1500',
  SMTP_SOCKET_TIMEOUT_MS: '1500',
  SMTP_ATTEMPT_TIMEOUT_MS: '8000',
  SMTP_POOL_IDLE_MS: '5000',
  SMTP_MAX_CONNECTIONS_PER_HOST: '2',
  SMTP_HELO_NAME: 'out.envoi.test',
  SHUTDOWN_GRACE_MS: '3000',
  DNS_TIMEOUT_MS: '500',
  DNS_TRIES: '1',
  RPC_TIMEOUT_MS: '3000',
  TRACKING_BASE_URL: 'https://track.envoi.test',
  TRACKING_SECRET: 'tracking-secret-for-the-delivery-integration-tests',
  DELIVERY_SUSPENDED_RECHECK_MS: '300',
};

/** Delivery events as the EVENTS stream carries them, in arrival order. */
export class EventCollector {
  readonly events: DeliveryOutcomeEvent[] = [];

  constructor(private readonly stopConsuming: () => void) {}

  static async start(connection: NatsConnection): Promise<EventCollector> {
    const jsm = await connection.jetstreamManager();
    const durable = `test-${randomBytes(4).toString('hex')}`;
    await jsm.consumers.add(EVENTS_STREAM, {
      durable_name: durable,
      filter_subject: 'events.message.>',
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
    });
    const consumer = await connection.jetstream().consumers.get(EVENTS_STREAM, durable);
    const messages = await consumer.consume({ max_messages: 256, expires: 1_000 });
    const collector = new EventCollector(() => messages.stop());
    void (async () => {
      for await (const message of messages) collector.take(message);
    })();
    return collector;
  }

  of(messageId: string): DeliveryOutcomeEvent[] {
    return this.events.filter((event) => event.data.id === messageId);
  }

  async waitFor(
    messageId: string,
    count: number,
    timeoutMs = 15_000,
  ): Promise<DeliveryOutcomeEvent[]> {
    return pollUntil(
      () => this.of(messageId),
      (events) => events.length >= count,
      { timeoutMs, what: `${count} delivery events of ${messageId}` },
    );
  }

  stop(): void {
    this.stopConsuming();
  }

  /** A stream message's events: a batch's, in order, or its own. */
  private take(message: JsMsg): void {
    const carried = decodeCarriedEvents(
      message.json<unknown>(),
      [OUTCOME_BATCH_TYPE],
      (event) => event as DeliveryOutcomeEvent,
    );
    this.events.push(...carried.events);
    message.ack();
  }
}

/**
 * Answers MessagesSubjects.deliveryView and deliveryViewsV2 in the messages service's place (its
 * queue group), from views the test registers (raw bytes, as for messages stored before sends):
 * the delivery service is tested alone, with messages it controls.
 */
export class ViewResponder {
  readonly views = new Map<string, DeliveryView>();
  /** Calls of either subject. */
  requests = 0;
  /** Calls of deliveryViewsV2, each with the ids asked for. */
  readonly batches: string[][] = [];
  /** Calls of deliveryView, by message id. */
  readonly singles: string[] = [];
  /** Messages deliveryViewsV2 answers as too large for its reply. */
  readonly separate = new Set<string>();
  private readonly subscriptions: Subscription[];

  constructor(connection: NatsConnection) {
    this.subscriptions = [
      connection.subscribe(MessagesSubjects.deliveryView.name, {
        queue: 'messages',
        callback: (error, message) => {
          if (error) return;
          this.requests++;
          const packet = decodePacket<NestRequestPacket<{ message_id: string }>>(message.data);
          this.singles.push(packet.data.message_id);
          const view = this.views.get(packet.data.message_id);
          message.respond(
            encodePacket(
              view
                ? { id: packet.id, response: view, isDisposed: true }
                : {
                    id: packet.id,
                    err: { code: MessagesErrorCode.MessageNotFound, message: 'message not found' },
                    isDisposed: true,
                  },
            ),
          );
        },
      }),
      connection.subscribe(MessagesSubjects.deliveryViewsV2.name, {
        queue: 'messages',
        callback: (error, message) => {
          if (error) return;
          this.requests++;
          const packet = decodePacket<NestRequestPacket<{ message_ids: string[] }>>(message.data);
          this.batches.push(packet.data.message_ids);
          // As the messages service does: from the first too large for the reply on, ids only.
          const found = packet.data.message_ids.filter((id) => this.views.has(id));
          const cut = found.findIndex((id) => this.separate.has(id));
          const inline = cut < 0 ? found : found.slice(0, cut);
          const response: DeliveryViewsV2 = {
            views: inline.flatMap((id) => this.views.get(id) ?? []),
            sends: [],
            separately: cut < 0 ? [] : found.slice(cut),
          };
          message.respond(encodePacket({ id: packet.id, response, isDisposed: true }));
        },
      }),
    ];
  }

  stop(): void {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
  }
}

export interface DeliveryTestApp {
  platform: IsolatedPlatform;
  env: Record<string, string>;
  dns: DnsTestServer;
  /** Offers STARTTLS (127.0.0.1), and one that does not (127.0.0.2), on the same port. */
  sink: SmtpSink;
  plainSink: SmtpSink;
  port: number;
  connection: NatsConnection;
  rpc: RpcClient;
  /** The test's own connections to the service's database (for reading the attempts log). */
  db: Pool;
  views: ViewResponder;
  events: EventCollector;
  /** The delivery service under test (in this process); restartable. */
  service: DeliveryInstance;
  startService(extra?: Record<string, string>): Promise<DeliveryInstance>;
  /**
   * Another delivery service, started as a process from dist/ (migrations, then main.js) with
   * the same environment plus `extra`; stopped with the platform, or killed by its PID.
   */
  startChildService(extra?: Record<string, string>): Promise<ChildHandle>;
  close(): Promise<void>;
}

export interface DeliveryInstance {
  app: INestMicroservice;
  config: DeliveryConfig;
  dataSource: DataSource;
  worker: DeliveryWorker;
  pool: SmtpPool;
  close(): Promise<void>;
}

function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function startDelivery(env: Record<string, string>): Promise<DeliveryInstance> {
  const config = loadConfig(DeliveryConfig, env);
  @Module({ imports: [AppModule.forRoot(config)] })
  class DeliveryTestModule {}
  const app = await NestFactory.createMicroservice(DeliveryTestModule, {
    // As main.ts does: the bus transport's grace period is SHUTDOWN_GRACE_MS too.
    ...natsMicroserviceOptions(SERVICE_NAME, config.natsServers(), config.SHUTDOWN_GRACE_MS),
    logger: false,
  });
  configureServiceTransport(app, createLogger(SERVICE_NAME, process.env['LOG_LEVEL'] ?? 'silent'));
  await app.listen();
  const worker = app.get(DeliveryWorker);
  await worker.ready;
  return {
    app,
    config,
    dataSource: app.get(DataSource),
    worker,
    pool: app.get(SmtpPool),
    close: () => app.close(),
  };
}

/**
 * The delivery service under test (in this process) with the real domains service (a process
 * from dist/, for DKIM keys) and accounts service (for account statuses) on a private database and nats-server, a DNS server on loopback as
 * every resolver, and smtp-server sinks on loopback as the recipients' MX hosts.
 */
export async function startDeliveryTestApp(): Promise<DeliveryTestApp> {
  await IsolatedPlatform.build();
  const platform = await IsolatedPlatform.start();
  const dns = await DnsTestServer.start();
  const stops: Array<() => Promise<void>> = [() => dns.stop(), () => platform.stop()];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  };
  try {
    const baseEnv = platform.env({
      DKIM_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      DNS_SERVERS: dns.address,
      DNS_TIMEOUT_MS: '300',
      DNS_TRIES: '1',
      DNS_RECHECK_INTERVAL_MS: '3600000',
      OUTBOX_RELAY_INTERVAL_MS: '100',
    });
    await platform.startService('domains', baseEnv);
    // Answers the account statuses delivery checks (accounts it does not know count as active).
    await platform.startService('accounts', baseEnv);

    let port = 0;
    let sink: SmtpSink | undefined;
    let plainSink: SmtpSink | undefined;
    for (let tries = 0; tries < 5 && !plainSink; tries++) {
      port = await freePort('127.0.0.1');
      try {
        sink = await SmtpSink.start('127.0.0.1', port, true);
        plainSink = await SmtpSink.start('127.0.0.2', port, false);
      } catch {
        await sink?.stop();
        sink = undefined;
      }
    }
    if (!sink || !plainSink) throw new Error('no free port for the SMTP sinks');
    const sinks = [sink, plainSink];
    stops.push(() => Promise.all(sinks.map((s) => s.stop())).then(() => undefined));

    const env: Record<string, string> = {
      ...(platform.env() as Record<string, string>),
      ...TEST_ENV,
      DNS_SERVERS: dns.address,
      SMTP_OUTBOUND_PORT: String(port),
    };
    await runDeliveryMigrations(env['DATABASE_URL'] ?? '');
    const db = new Pool({ connectionString: env['DATABASE_URL'], max: 2 });
    stops.push(() => db.end());

    const connection = await connectNats({ servers: [platform.natsUrl], name: 'delivery-test' });
    stops.push(() => connection.drain());
    const views = new ViewResponder(connection);
    stops.push(() => Promise.resolve(views.stop()));

    let service = await startDelivery(env);
    const instances = [service];
    stops.push(async () => {
      for (const instance of instances) await instance.close().catch(() => undefined);
    });
    // The relay creates both streams at its first run.
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
    const events = await EventCollector.start(connection);
    stops.push(() => Promise.resolve(events.stop()));

    const app: DeliveryTestApp = {
      platform,
      env,
      dns,
      sink,
      plainSink,
      port,
      connection,
      rpc: new RpcClient(connection, 15_000),
      db,
      views,
      events,
      service,
      async startService(extra = {}) {
        service = await startDelivery({ ...env, ...extra });
        instances.push(service);
        app.service = service;
        return service;
      },
      startChildService: (extra = {}) => platform.startService('delivery', { ...env, ...extra }),
      close: stopAll,
    };
    return app;
  } catch (error) {
    await stopAll();
    throw error;
  }
}

// ---- Fixtures ----

let counter = 0;

/** A name no other test uses. */
export function unique(prefix: string): string {
  return `${prefix}${++counter}-${randomBytes(3).toString('hex')}`;
}

/** Publishes a domain's records as shown. */
export function publishRecords(app: DeliveryTestApp, domain: DomainRecord): void {
  app.dns.publish(domain.dns_records);
}

export interface TestSender {
  accountId: string;
  domain: DomainRecord;
}

/** A verified sending domain of the account (real domains service, records published). */
export async function newSender(
  app: DeliveryTestApp,
  accountId: string = randomUUID(),
): Promise<TestSender> {
  const created = await app.rpc.request(DomainsSubjects.createDomain, {
    account_id: accountId,
    body: { domain: `${unique('s')}.example.test` },
  });
  publishRecords(app, created);
  const domain = await app.rpc.request(DomainsSubjects.checkDns, {
    account_id: accountId,
    domain: created.domain,
  });
  if (!domain.dns_valid) throw new Error(`${domain.domain} did not verify`);
  return { accountId, domain };
}

/** A recipient domain whose MX is the sink at `address` (127.0.0.1 offers STARTTLS). */
export function recipientDomain(app: DeliveryTestApp, address = '127.0.0.1'): string {
  const domain = `${unique('r')}.dest.test`;
  app.dns.set(domain, [{ type: 'MX', exchange: `mx.${domain}`, priority: 10 }]);
  app.dns.set(`mx.${domain}`, [{ type: 'A', address }]);
  return domain;
}

export function rawMessage(sender: TestSender, to: string, id: string, subject = 'Hello'): string {
  return [
    `From: Sender <hello@${sender.domain.domain}>`,
    `To: <${to}>`,
    `Subject: ${subject}`,
    `Date: ${new Date().toUTCString()}`,
    `Message-ID: <${id}@${sender.domain.domain}>`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Hello there,',
    '.a line starting with a dot',
    'Bye   ',
    '',
  ].join('\r\n');
}

/** A message the view responder serves; override anything. */
export function registerMessage(
  app: DeliveryTestApp,
  sender: TestSender,
  recipients: string[],
  overrides: Partial<DeliveryView> = {},
): DeliveryView {
  const id = randomUUID();
  const view: DeliveryView = {
    id,
    message_id_header: `<${id}@${sender.domain.domain}>`,
    account_id: sender.accountId,
    domain_id: sender.domain.id,
    domain: sender.domain.domain,
    sender: `hello@${sender.domain.domain}`,
    subject: 'Hello',
    envelope_recipients: recipients,
    status: 'Received',
    sandbox: false,
    sandbox_result: null,
    first_attempt_at: null,
    expires_at: null,
    tracking: { open: false, click: false },
    content_base64: Buffer.from(rawMessage(sender, recipients[0] ?? '', id)).toString('base64'),
    ...overrides,
  };
  app.views.views.set(id, view);
  return view;
}

/** Publishes a delivery job as the messages service's relay does (Nats-Msg-Id = a job id). */
async function publishToQueue(
  app: DeliveryTestApp,
  job: DeliveryJob | DeliveryBatchJob,
  msgId: string,
): Promise<void> {
  await app.connection
    .jetstream()
    .publish(
      MessagesStreamSubjects.deliveryJobs.name,
      new TextEncoder().encode(JSON.stringify(job)),
      {
        msgID: msgId,
      },
    );
}

/** Publishes one message's job (a retry, or a send of one message). */
export function publishJob(
  app: DeliveryTestApp,
  view: DeliveryView,
  attempt = 1,
  msgId: string = randomUUID(),
): Promise<void> {
  return publishToQueue(app, { message_id: view.id, account_id: view.account_id, attempt }, msgId);
}

/** Publishes a first-attempt job for a chunk of messages, as accept queues a send's. */
export function publishChunkJob(
  app: DeliveryTestApp,
  views: DeliveryView[],
  msgId: string = randomUUID(),
): Promise<void> {
  const job: DeliveryBatchJob = {
    message_ids: views.map((view) => view.id),
    account_id: views[0]?.account_id ?? '',
    attempt: 1,
  };
  return publishToQueue(app, job, msgId);
}

/** A row of the attempts log, as the tests read it. */
export interface AttemptRow {
  message_id: string;
  attempt: number;
  state: string;
  status: string | null;
  outcome: string | null;
  remote_host: string;
  reply: string;
  tls: boolean | null;
  started_at: Date;
  finished_at: Date | null;
  bounce_classification: string | null;
  delivered_to: string[];
  bounced_to: string[];
}

const ATTEMPT_COLUMNS = `message_id, attempt, state, status, outcome, remote_host, reply, tls,
  started_at, finished_at, bounce_classification, delivered_to, bounced_to`;

/** The attempts the service logged for a message, in order. */
export async function attemptsOf(app: DeliveryTestApp, messageId: string): Promise<AttemptRow[]> {
  const result = await app.db.query<AttemptRow>(
    `SELECT ${ATTEMPT_COLUMNS} FROM delivery.attempts WHERE message_id = $1 ORDER BY attempt`,
    [messageId],
  );
  return result.rows;
}

/** The attempts of several messages, by message then attempt. */
export async function attemptsOfAll(
  app: DeliveryTestApp,
  messageIds: string[],
): Promise<AttemptRow[]> {
  const result = await app.db.query<AttemptRow>(
    `SELECT ${ATTEMPT_COLUMNS} FROM delivery.attempts WHERE message_id = ANY($1::uuid[])
      ORDER BY message_id, attempt`,
    [messageIds],
  );
  return result.rows;
}

/** The delivery workers' durable consumer as the server sees it (pending, unacknowledged). */
export async function deliveryJobsInfo(app: DeliveryTestApp) {
  return (await app.connection.jetstreamManager()).consumers.info('DELIVERY', 'delivery-workers');
}

/** Waits until no delivery job is pending or unacknowledged. */
export async function waitForEveryJobAcknowledged(
  app: DeliveryTestApp,
  timeoutMs: number,
): Promise<void> {
  await pollUntil(
    () => deliveryJobsInfo(app),
    (info) => info.num_pending === 0 && info.num_ack_pending === 0,
    { what: 'every job acknowledged', timeoutMs },
  );
}

export function isDelivered(event: { type: string }): boolean {
  return event.type === 'message.delivered';
}

/** Asymmetric matchers typed `unknown`: jest types them `any`, which type-aware lint refuses. */
export const anyString: unknown = expect.any(String);
