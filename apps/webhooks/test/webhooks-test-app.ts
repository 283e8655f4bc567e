import { randomBytes, randomUUID } from 'node:crypto';

import { EVENTS_STREAM, type StreamSubject } from '@envoi/contracts-core';
import { type WebhookEventFlag, WebhooksStreamSubjects } from '@envoi/contracts-webhooks';
import { connectNats } from '@envoi/shared-nats';
import { type ChildHandle, IsolatedPlatform } from '@envoi/shared-testing';
import { WebhookReceiver } from '@envoi/shared-testing';
import type { NatsConnection } from 'nats';
import { Client } from 'pg';

import { WEBHOOK_EVENT_DURABLES } from '../src/dispatch/webhook-event-sources';
import { WebhookSecretCipher } from '../src/webhooks/webhook-secret-cipher';

/** Compressed time: 3 attempts 10 and 160 ms apart, a 1.5 s timeout, 2.5 s leases. */
export const SERVICE_SETTINGS = {
  WEBHOOK_TIMEOUT_MS: '1500',
  WEBHOOK_MAX_ATTEMPTS: '3',
  WEBHOOK_RETRY_BASE_MS: '10',
  WEBHOOK_DISABLE_AFTER_FAILURES: '5',
  WEBHOOK_ENDPOINT_CONCURRENCY: '4',
  WEBHOOK_POLL_INTERVAL_MS: '50',
  WEBHOOK_LEASE_MS: '2000',
  WEBHOOK_PURGE_INTERVAL_MS: '200',
  WEBHOOK_STREAM_TEMPORARY_TTL_MS: '3000',
  SHUTDOWN_GRACE_MS: '500',
  // The receivers are plain-http servers on loopback, which production refuses.
  OUTBOUND_ALLOW_HTTP: 'true',
  OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8',
};

export interface TestWebhook {
  accountId: string;
  url: string;
  secret: string;
  flags: readonly WebhookEventFlag[];
  /** Scoped to these domains; global when absent. */
  domains?: readonly string[];
  enabled?: boolean;
}

export interface WebhookRow {
  enabled: boolean;
  disabled_reason: string | null;
  success_count: string;
  error_count: string;
  errors_since_last_success: number;
  last_request_at: Date | null;
}

export interface AttemptRow {
  event_id: string;
  attempt: number;
  response_status: number | null;
  error: string | null;
  duration_ms: number;
  response_body: string;
  next_retry_at: Date | null;
}

/** The webhooks service from dist/ on a private database and bus, with a client of each. */
export class WebhooksTestApp {
  service: ChildHandle | undefined;
  private readonly secrets: WebhookSecretCipher;

  private constructor(
    readonly platform: IsolatedPlatform,
    readonly db: Client,
    readonly nats: NatsConnection,
    private readonly secretKey: string,
    private readonly settings: Readonly<Record<string, string>>,
  ) {
    this.secrets = new WebhookSecretCipher(secretKey);
  }

  /** `settings` add to (or override) SERVICE_SETTINGS. */
  static async start(settings: Readonly<Record<string, string>> = {}): Promise<WebhooksTestApp> {
    await IsolatedPlatform.build();
    const platform = await IsolatedPlatform.start({ owner: 'webhooks' });
    const app = new WebhooksTestApp(
      platform,
      new Client({ connectionString: platform.databaseUrl }),
      await connectNats({ servers: [platform.natsUrl], name: 'webhooks-test-client' }),
      randomBytes(32).toString('hex'),
      settings,
    );
    await app.startService();
    await app.db.connect();
    return app;
  }

  async startService(): Promise<ChildHandle> {
    this.service = await this.platform.startService(
      'webhooks',
      this.platform.env({
        ...SERVICE_SETTINGS,
        ...this.settings,
        WEBHOOK_SECRET_ENCRYPTION_KEY: this.secretKey,
      }),
    );
    return this.service;
  }

  async close(): Promise<void> {
    await this.nats.drain();
    await this.db.end();
    await this.platform.stop();
  }

  async createWebhook(webhook: TestWebhook): Promise<string> {
    const id = randomUUID();
    const flags = webhook.flags.map((flag) => `, ${flag}`).join('');
    const values = webhook.flags.map((_flag, index) => `, $${index + 8}`).join('');
    await this.db.query(
      `INSERT INTO webhooks.webhooks (id, account_id, name, url, enabled, scope, secret_ciphertext${flags})
       VALUES ($1, $2, $3, $4, $5, $6, $7${values})`,
      [
        id,
        webhook.accountId,
        `test ${id}`,
        webhook.url,
        webhook.enabled ?? true,
        webhook.domains ? 'scoped' : 'global',
        this.secrets.seal(webhook.secret, id),
        ...webhook.flags.map(() => true),
      ],
    );
    for (const domain of webhook.domains ?? []) {
      await this.db.query(
        'INSERT INTO webhooks.webhook_domains (webhook_id, domain, account_id) VALUES ($1, $2, $3)',
        [id, domain, webhook.accountId],
      );
    }
    return id;
  }

  async publish<E extends { id: string }>(
    subject: StreamSubject<unknown>,
    event: E,
    msgId = event.id,
  ) {
    await this.nats.jetstream().publish(subject.name, JSON.stringify(event), { msgID: msgId });
  }

  async webhook(id: string): Promise<WebhookRow> {
    const { rows } = await this.db.query<WebhookRow>(
      `SELECT enabled, disabled_reason, success_count, error_count, errors_since_last_success,
              last_request_at FROM webhooks.webhooks WHERE id = $1`,
      [id],
    );
    const [row] = rows;
    if (!row) throw new Error(`no webhook ${id}`);
    return row;
  }

  /** The `webhook.disabled` events of the webhook in the outbox (what its members are told). */
  async disabledNotices(webhookId: string): Promise<Array<Record<string, unknown>>> {
    const { rows } = await this.db.query<{ payload: Record<string, unknown> }>(
      `SELECT payload FROM webhooks.outbox
       WHERE subject = $1 AND payload->'data'->>'webhook_id' = $2 ORDER BY seq`,
      [WebhooksStreamSubjects.webhookDisabled.name, webhookId],
    );
    return rows.map((row) => row.payload);
  }

  async attempts(webhookId: string): Promise<AttemptRow[]> {
    const { rows } = await this.db.query<AttemptRow>(
      `SELECT event_id, attempt, response_status, error, duration_ms, response_body, next_retry_at
       FROM webhooks.webhook_attempts WHERE webhook_id = $1 ORDER BY seq`,
      [webhookId],
    );
    return rows;
  }

  /** The deliveries of an event: webhook id → state. */
  async deliveriesOf(eventId: string): Promise<Record<string, string>> {
    const { rows } = await this.db.query<{ webhook_id: string; state: string }>(
      'SELECT webhook_id, state FROM webhooks.webhook_deliveries WHERE event_id = $1',
      [eventId],
    );
    return Object.fromEntries(rows.map((row) => [row.webhook_id, row.state]));
  }

  /** Whether the fan-out has acknowledged every event published so far (all its durables). */
  async eventsHandled(): Promise<boolean> {
    const manager = await this.nats.jetstreamManager();
    for (const durable of Object.keys(WEBHOOK_EVENT_DURABLES)) {
      const info = await manager.consumers.info(EVENTS_STREAM, durable);
      if (info.num_pending > 0 || info.num_ack_pending > 0) return false;
    }
    return true;
  }
}

/** A message.delivered event of the stream, as the delivery service publishes it. */
export function deliveredEvent(accountId: string, from: string) {
  const id = randomUUID();
  return {
    id: randomUUID(),
    type: 'message.delivered',
    timestamp: new Date().toISOString(),
    data: {
      account_id: accountId,
      event: 'on_delivered',
      from,
      recipient: 'to@example.net',
      subject: 'Hello',
      message_id_header: `<${id}@example.com>`,
      id,
      status: 'Delivered',
      sandbox: false,
      recipients: [{ email: 'to@example.net', result: 'delivered', remote_host: '', reply: '' }],
    },
  };
}

export function newSecret(): string {
  return `envoi-whsec-${randomBytes(24).toString('base64url')}`;
}

export interface WebhooksTestRig {
  app: WebhooksTestApp;
  receiver: WebhookReceiver;
}

/**
 * Starts the service and a loopback receiver before the file's tests and stops both after;
 * answers a getter that fails a test when they did not start.
 */
export function useWebhooksTestRig(
  settings: Readonly<Record<string, string>> = {},
): () => WebhooksTestRig {
  let app: WebhooksTestApp | undefined;
  let receiver: WebhookReceiver | undefined;
  beforeAll(async () => {
    [app, receiver] = await Promise.all([WebhooksTestApp.start(settings), WebhookReceiver.start()]);
  }, 120_000);
  afterAll(async () => {
    await receiver?.close();
    await app?.close();
  }, 60_000);
  return () => {
    if (!app || !receiver) throw new Error('the webhooks service did not start');
    return { app, receiver };
  };
}
