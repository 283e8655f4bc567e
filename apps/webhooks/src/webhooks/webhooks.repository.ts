import type { Page, PageRequest } from '@envoi/contracts-core';
import type { WebhookEventFlag, WebhookFilters } from '@envoi/contracts-webhooks';
import { keysetPage } from '@envoi/shared-database';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager, In, type SelectQueryBuilder } from 'typeorm';

import { WebhookEntity } from './webhook.entity';
import { WebhookDomainEntity } from './webhook-domain.entity';
import { FLAG_PROPERTIES } from './webhook-flags';
import type { WebhookTarget } from './webhook-rules';
import { WebhookSubscriptions } from './webhook-subscriptions.service';

/** A stored webhook with the domains it is linked to (`[]` for a global one). */
export interface StoredWebhook {
  webhook: WebhookEntity;
  domains: string[];
}

type FlagProperty = (typeof FLAG_PROPERTIES)[WebhookEventFlag];

/** The fields of a new webhook the caller chooses; flags left out, counters and times default. */
export type NewWebhook = Pick<
  WebhookEntity,
  'id' | 'accountId' | 'name' | 'url' | 'enabled' | 'secretCiphertext'
> &
  Partial<Pick<WebhookEntity, FlagProperty | 'temporary' | 'streamed' | 'streamUsedAt'>> &
  WebhookTarget;

/** An update: the columns to change, and the scope and domains it ends with. */
export type WebhookChanges = Partial<
  Pick<WebhookEntity, 'name' | 'url' | 'enabled' | FlagProperty>
> &
  WebhookTarget;

/** `domains` given: only webhooks linked to at least one of them (what a domain-scoped key sees). */
function restrictToDomains(
  query: SelectQueryBuilder<WebhookEntity>,
  domains: readonly string[] | undefined,
): void {
  if (domains === undefined) return;
  query.andWhere(
    `EXISTS (SELECT 1 FROM webhooks.webhook_domains d
      WHERE d.webhook_id = webhook.id AND d.domain = ANY(:restriction))`,
    { restriction: [...domains] },
  );
}

/**
 * The statements on webhooks.webhooks and webhooks.webhook_domains. Each change, once committed,
 * drops the account's cached subscriptions (WebhookSubscriptions).
 */
@Injectable()
export class WebhooksRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly subscriptions: WebhookSubscriptions,
  ) {}

  /** The account's webhooks matching the filters, newest first, with their domains. */
  async page(
    accountId: string,
    filters: WebhookFilters,
    restriction: readonly string[] | undefined,
    page: PageRequest,
  ): Promise<Page<StoredWebhook>> {
    const query = this.dataSource.manager
      .createQueryBuilder(WebhookEntity, 'webhook')
      .where('webhook.accountId = :accountId', { accountId })
      .andWhere('NOT webhook.temporary');
    for (const [name, value] of Object.entries(filters)) {
      if (typeof value !== 'boolean') continue;
      const property = name === 'enabled' ? 'enabled' : FLAG_PROPERTIES[name as WebhookEventFlag];
      query.andWhere(`webhook.${property} = :${name}`, { [name]: value });
    }
    restrictToDomains(query, restriction);
    const result = await keysetPage(query, 'webhook', page);
    const domains = await this.domainsOf(
      this.dataSource.manager,
      result.data.map((webhook) => webhook.id),
    );
    return {
      ...result,
      data: result.data.map((webhook) => ({ webhook, domains: domains.get(webhook.id) ?? [] })),
    };
  }

  /** The account's webhook, if the restriction lets it be seen; locked when `manager` is a transaction's. */
  async find(
    accountId: string,
    webhookId: string,
    restriction: readonly string[] | undefined,
    manager: EntityManager = this.dataSource.manager,
    lock = false,
  ): Promise<StoredWebhook | null> {
    const query = manager
      .createQueryBuilder(WebhookEntity, 'webhook')
      .where('webhook.id = :webhookId AND webhook.accountId = :accountId', {
        webhookId,
        accountId,
      });
    restrictToDomains(query, restriction);
    if (lock) query.setLock('pessimistic_write');
    const webhook = await query.getOne();
    if (!webhook) return null;
    const domains = await this.domainsOf(manager, [webhook.id]);
    return { webhook, domains: domains.get(webhook.id) ?? [] };
  }

  async insert(fields: NewWebhook): Promise<StoredWebhook> {
    const stored = await this.dataSource.transaction(async (manager) => {
      const { domains, ...columns } = fields;
      await manager.insert(WebhookEntity, columns);
      await this.replaceDomains(manager, fields.id, fields.accountId, domains);
      return this.reread(manager, fields.id);
    });
    this.subscriptions.changed([fields.accountId]);
    return stored;
  }

  /**
   * Applies `decide` to the locked webhook and stores the changes it answers (null: not found),
   * in one transaction, so concurrent updates of the domains do not interleave.
   */
  async update(
    accountId: string,
    webhookId: string,
    restriction: readonly string[] | undefined,
    decide: (current: StoredWebhook) => Promise<WebhookChanges> | WebhookChanges,
  ): Promise<StoredWebhook | null> {
    const updated = await this.dataSource.transaction(async (manager) => {
      const current = await this.find(accountId, webhookId, restriction, manager, true);
      if (!current) return null;
      const { domains, ...columns } = await decide(current);
      await manager.update(WebhookEntity, { id: webhookId }, { ...columns, updatedAt: new Date() });
      await this.replaceDomains(manager, webhookId, accountId, domains);
      return this.reread(manager, webhookId);
    });
    if (updated) this.subscriptions.changed([accountId]);
    return updated;
  }

  /** Deletes the webhook (its domains go with it); false when there is none the restriction sees. */
  async delete(
    accountId: string,
    webhookId: string,
    restriction: readonly string[] | undefined,
  ): Promise<boolean> {
    const deleted = await this.dataSource.transaction(async (manager) => {
      const found = await this.find(accountId, webhookId, restriction, manager, true);
      if (!found) return false;
      await manager.delete(WebhookEntity, { id: webhookId });
      return true;
    });
    if (deleted) this.subscriptions.changed([accountId]);
    return deleted;
  }

  /** The webhook as stored, domains in the order every read answers them. */
  private async reread(manager: EntityManager, webhookId: string): Promise<StoredWebhook> {
    const webhook = await manager.findOneByOrFail(WebhookEntity, { id: webhookId });
    const domains = await this.domainsOf(manager, [webhookId]);
    return { webhook, domains: domains.get(webhookId) ?? [] };
  }

  private async replaceDomains(
    manager: EntityManager,
    webhookId: string,
    accountId: string,
    domains: readonly string[],
  ): Promise<void> {
    await manager.delete(WebhookDomainEntity, { webhookId });
    if (domains.length === 0) return;
    await manager.insert(
      WebhookDomainEntity,
      domains.map((domain) => ({ webhookId, domain, accountId })),
    );
  }

  /** The linked domains of each webhook, in name order. */
  private async domainsOf(
    manager: EntityManager,
    webhookIds: readonly string[],
  ): Promise<Map<string, string[]>> {
    const byWebhook = new Map<string, string[]>();
    if (webhookIds.length === 0) return byWebhook;
    const rows = await manager.find(WebhookDomainEntity, {
      where: { webhookId: In([...webhookIds]) },
      order: { domain: 'ASC' },
    });
    for (const row of rows) {
      const domains = byWebhook.get(row.webhookId) ?? [];
      domains.push(row.domain);
      byWebhook.set(row.webhookId, domains);
    }
    return byWebhook;
  }
}
