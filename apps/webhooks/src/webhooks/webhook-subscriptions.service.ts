import { WEBHOOK_EVENT_FLAGS, WebhookChangeSubjects } from '@envoi/contracts-webhooks';
import { preparedQuery } from '@envoi/shared-database';
import {
  BroadcastDroppedCache,
  NATS_CONNECTION,
  RpcClient,
  subscribeBroadcast,
} from '@envoi/shared-nats';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { NatsConnection, Subscription } from 'nats';
import { DataSource } from 'typeorm';

import { WEBHOOKS_SCHEMA } from '../database/data-source-options';
import { WebhooksConfig } from '../webhooks.config';
import type { SubscribedEndpoint, SubscriptionSet } from './subscription-set';

/** Accounts whose subscription sets a replica keeps at most. */
const MAX_CACHED_ACCOUNTS = 10_000;

const S = WEBHOOKS_SCHEMA;

/** An account's enabled webhooks, each with its domains and flags. */
const SUBSCRIPTIONS_SQL = `
  SELECT w.id, w.url, w.secret_ciphertext, w.scope = 'global' AS global, w.streamed,
    w.errors_since_last_success > 0 AS failing,
    coalesce(array_agg(d.domain) FILTER (WHERE d.domain IS NOT NULL), '{}') AS domains,
    ${WEBHOOK_EVENT_FLAGS.map((flag) => `w.${flag}`).join(', ')}
  FROM ${S}.webhooks w LEFT JOIN ${S}.webhook_domains d ON d.webhook_id = w.id
  WHERE w.account_id = $1 AND w.enabled
  GROUP BY w.id`;

type SubscriptionRow = {
  id: string;
  url: string;
  secret_ciphertext: string;
  global: boolean;
  streamed: boolean;
  failing: boolean;
  domains: string[];
} & Record<string, unknown>;

function subscriptionSetOf(rows: readonly SubscriptionRow[]): SubscriptionSet {
  const endpoints = rows
    .filter((row) => row.url !== '')
    .map((row): SubscribedEndpoint => ({
      webhookId: row.id,
      url: row.url,
      secretCiphertext: row.secret_ciphertext,
      global: row.global,
      domains: new Set(row.domains),
      flags: new Set(WEBHOOK_EVENT_FLAGS.filter((flag) => row[flag] === true)),
      failing: row.failing,
    }));
  return { endpoints, streamed: rows.some((row) => row.streamed) };
}

/**
 * Which webhooks of an account receive what, kept per replica for
 * WEBHOOK_SUBSCRIPTION_CACHE_TTL_MS: the fan-out reads it for every event, so that an event
 * nobody subscribed to costs no statement. A change of the account's webhooks (made by this
 * service: create, update, delete, a stream opened, disabled by its calls) drops it here at once
 * and on the other replicas by a broadcast sent after the change committed.
 */
@Injectable()
export class WebhookSubscriptions extends BroadcastDroppedCache<SubscriptionSet> {
  private readonly logger = new Logger(WebhookSubscriptions.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly rpc: RpcClient,
    @Inject(NATS_CONNECTION) private readonly connection: NatsConnection,
    private readonly config: WebhooksConfig,
  ) {
    super(MAX_CACHED_ACCOUNTS);
  }

  protected listen(drop: (accountId: string) => void): Subscription[] {
    return [
      subscribeBroadcast(
        this.connection,
        WebhookChangeSubjects.changed,
        (event) => drop(event.account_id),
        (error) => this.logger.warn(`webhook change broadcast: ${String(error)}`),
      ),
    ];
  }

  /** The account's subscription set, cached or read. */
  of(accountId: string): Promise<SubscriptionSet> {
    return this.cache.get(
      accountId,
      async () =>
        subscriptionSetOf(
          await preparedQuery<SubscriptionRow>(this.dataSource.manager, SUBSCRIPTIONS_SQL, [
            accountId,
          ]),
        ),
      () => this.config.WEBHOOK_SUBSCRIPTION_CACHE_TTL_MS,
    );
  }

  /** The accounts' webhooks changed (committed): drops their sets here and on every replica. */
  changed(accountIds: Iterable<string>): void {
    for (const accountId of new Set(accountIds)) {
      this.cache.invalidate(accountId);
      try {
        this.rpc.emit(WebhookChangeSubjects.changed, { account_id: accountId });
      } catch (error) {
        this.logger.error(
          `could not announce a change of ${accountId}'s webhooks: ${String(error)}`,
        );
      }
    }
  }
}
