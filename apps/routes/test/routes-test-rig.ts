import { randomBytes, randomUUID } from 'node:crypto';

import { EVENTS_STREAM } from '@envoi/contracts-core';
import { DomainsSubjects } from '@envoi/contracts-domains';
import {
  INBOUND_SPOOL_BUCKET,
  InboundStreamSubjects,
  type RoutedMailEvent,
} from '@envoi/contracts-routes';
import { connectNats, putUpload, RpcClient } from '@envoi/shared-nats';
import {
  type ChildHandle,
  IsolatedPlatform,
  pollUntil,
  WebhookReceiver,
} from '@envoi/shared-testing';
import type { NatsConnection } from 'nats';
import { DataSource } from 'typeorm';

import { routesDataSourceOptions } from '../src/database/data-source-options';
import { ROUTED_MAIL_DURABLE } from '../src/delivery/routed-mail.controller';

const SPOOL_TTL_MS = 3_600_000;

/** The routes service from dist/ (with the domains service) on a private database and bus. */
export class RoutesTestRig {
  private constructor(
    private readonly platform: IsolatedPlatform,
    private readonly routesEnv: NodeJS.ProcessEnv,
    private routes: ChildHandle,
    readonly nats: NatsConnection,
    readonly db: DataSource,
    readonly receiver: WebhookReceiver,
  ) {}

  static async start(owner: string, settings: Record<string, string>): Promise<RoutesTestRig> {
    await IsolatedPlatform.build();
    const platform = await IsolatedPlatform.start({ owner });
    await platform.startService('domains', platform.offlineDomainsEnv());
    const routesEnv = platform.env({
      ROUTE_SECRET_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      // The receivers are plain-http servers on loopback, which production refuses.
      OUTBOUND_ALLOW_HTTP: 'true',
      OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8',
      ...settings,
    });
    const routes = await platform.startService('routes', routesEnv);
    const nats = await connectNats({ servers: [platform.natsUrl], name: `${owner}-test` });
    const db = await new DataSource(routesDataSourceOptions(platform.databaseUrl, 2)).initialize();
    return new RoutesTestRig(platform, routesEnv, routes, nats, db, await WebhookReceiver.start());
  }

  /** SIGKILL to the routes service (its own PID); answers the signal it died of. */
  async killRoutes(): Promise<NodeJS.Signals | null> {
    await this.routes.kill();
    return this.routes.child.signalCode;
  }

  /** Starts the routes service again, with the same settings. */
  async restartRoutes(): Promise<void> {
    this.routes = await this.platform.startService('routes', this.routesEnv, { migrate: false });
  }

  async close(): Promise<void> {
    await this.db.destroy();
    await this.receiver.close();
    await this.nats.drain();
    await this.platform.stop();
  }

  rpc(): RpcClient {
    return new RpcClient(this.nats, 10_000);
  }

  /** A new account with one domain. */
  async accountWithDomain(): Promise<{ accountId: string; domain: string }> {
    const accountId = randomUUID();
    const created = await this.rpc().request(DomainsSubjects.createDomain, {
      account_id: accountId,
      body: { domain: `d-${randomBytes(4).toString('hex')}.example.test` },
    });
    return { accountId, domain: created.domain };
  }

  /** What the MX does once it has a message: spool it, then publish the routed event. */
  async receive(
    accountId: string,
    raw: Buffer,
    recipients: Array<{ address: string; route_ids: string[] }>,
  ): Promise<RoutedMailEvent> {
    const inboundId = randomUUID();
    const spool = await putUpload(this.nats, INBOUND_SPOOL_BUCKET, inboundId, raw, SPOOL_TTL_MS);
    const event: RoutedMailEvent = {
      id: randomUUID(),
      type: 'inbound.routed',
      timestamp: new Date().toISOString(),
      data: {
        inbound_id: inboundId,
        received_at: new Date().toISOString(),
        remote_address: '127.0.0.1',
        helo: 'client.example.net',
        tls: false,
        envelope_from: 'customer@example.net',
        size: raw.length,
        spool,
        account_id: accountId,
        recipients,
      },
    };
    await this.nats
      .jetstream()
      .publish(InboundStreamSubjects.routed.name, JSON.stringify(event), { msgID: event.id });
    return event;
  }

  /** Until the routes service has handled every routed event published so far. */
  async eventsHandled(): Promise<void> {
    const jsm = await this.nats.jetstreamManager();
    await pollUntil(
      () => jsm.consumers.info(EVENTS_STREAM, ROUTED_MAIL_DURABLE),
      (info) => info.num_pending === 0 && info.num_ack_pending === 0,
      { what: 'the routed events handled', timeoutMs: 10_000 },
    );
  }
}

/** A RoutesTestRig started before the file's tests and stopped after them. */
export function useRoutesTestRig(
  owner: string,
  settings: Record<string, string> = {},
): () => RoutesTestRig {
  let rig: RoutesTestRig | undefined;
  beforeAll(async () => {
    rig = await RoutesTestRig.start(owner, settings);
  }, 120_000);
  afterAll(async () => {
    await rig?.close();
  }, 60_000);
  return () => {
    if (!rig) throw new Error('the routes service did not start');
    return rig;
  };
}
