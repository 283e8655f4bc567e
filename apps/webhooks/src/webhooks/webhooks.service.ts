import { randomUUID } from 'node:crypto';

import type { MessageResponse, Page, PageRequest } from '@envoi/contracts-core';
import {
  type CreatedWebhookRecord,
  type CreateWebhookBody,
  type UpdateWebhookBody,
  WEBHOOK_EVENT_FLAGS,
  type WebhookFilters,
  type WebhookRecord,
} from '@envoi/contracts-webhooks';
import { type OutboundPolicy, outboundPolicyOf } from '@envoi/shared-outbound';
import { Injectable } from '@nestjs/common';

import { WebhooksConfig } from '../webhooks.config';
import { AccountDomains } from './account-domains.service';
import { toCreatedWebhookRecord, toWebhookRecord } from './webhook.mapper';
import { FLAG_PROPERTIES } from './webhook-flags';
import {
  assertTargetGranted,
  checkWebhookUrl,
  targetOfCreate,
  targetOfUpdate,
  type WebhookTarget,
} from './webhook-rules';
import { generateWebhookSecret } from './webhook-secret';
import { WebhookSecretCipher } from './webhook-secret-cipher';
import { WebhooksException } from './webhooks.exception';
import { type StoredWebhook, type WebhookChanges, WebhooksRepository } from './webhooks.repository';

const TEMPORARY_WEBHOOK_NAME = 'Temporary stream webhook';

type FlagColumns = Omit<WebhookChanges, 'name' | 'url' | 'enabled' | 'scope' | 'domains'>;

/** The flags given in a body, as entity properties; `defaultValue` for the others (or leave them out). */
function flagColumns(
  body: CreateWebhookBody | UpdateWebhookBody,
  defaultValue: boolean | undefined,
): FlagColumns {
  const columns: FlagColumns = {};
  for (const flag of WEBHOOK_EVENT_FLAGS) {
    const value = body[flag] ?? defaultValue;
    if (value !== undefined) columns[FLAG_PROPERTIES[flag]] = value;
  }
  return columns;
}

/**
 * The webhooks management API. `granted`: the domains a domain-scoped key holds the route's scope
 * for (undefined: every domain); such a key sees only webhooks linked to one of them.
 */
@Injectable()
export class WebhooksService {
  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly secrets: WebhookSecretCipher,
    private readonly accountDomains: AccountDomains,
    config: WebhooksConfig,
  ) {
    this.outbound = outboundPolicyOf(config);
  }

  private readonly outbound: OutboundPolicy;

  async list(
    accountId: string,
    filters: WebhookFilters = {},
    granted: readonly string[] | undefined,
    page: PageRequest,
  ): Promise<Page<WebhookRecord>> {
    const result = await this.webhooks.page(accountId, filters, granted, page);
    return { ...result, data: result.data.map((w) => toWebhookRecord(w.webhook, w.domains)) };
  }

  async create(
    accountId: string,
    body: CreateWebhookBody,
    granted: readonly string[] | undefined,
  ): Promise<CreatedWebhookRecord> {
    checkWebhookUrl(body.url, this.outbound);
    const target = targetOfCreate(body);
    assertTargetGranted(target, granted);
    await this.accountDomains.requireOwned(accountId, target.domains);
    const id = randomUUID();
    const secret = generateWebhookSecret();
    const stored = await this.webhooks.insert({
      id,
      accountId,
      name: body.name,
      url: body.url,
      enabled: body.enabled ?? true,
      secretCiphertext: this.secrets.seal(secret, id),
      ...flagColumns(body, false),
      ...target,
    });
    return toCreatedWebhookRecord(stored.webhook, stored.domains, secret);
  }

  /**
   * A temporary webhook for a stream listener (POST …/webhooks/stream without an id): global,
   * every event on, no URL (its events go to the stream only), never listed, purged when idle.
   */
  async createTemporary(
    accountId: string,
    granted: readonly string[] | undefined,
  ): Promise<StoredWebhook> {
    const target: WebhookTarget = { scope: 'global', domains: [] };
    assertTargetGranted(target, granted);
    const id = randomUUID();
    return this.webhooks.insert({
      id,
      accountId,
      name: TEMPORARY_WEBHOOK_NAME,
      url: '',
      enabled: true,
      secretCiphertext: this.secrets.seal(generateWebhookSecret(), id),
      ...flagColumns({}, true),
      ...target,
      temporary: true,
      streamed: true,
      streamUsedAt: new Date(),
    });
  }

  async get(
    accountId: string,
    webhookId: string,
    granted: readonly string[] | undefined,
  ): Promise<WebhookRecord> {
    const found = await this.webhooks.find(accountId, webhookId, granted);
    if (!found) throw WebhooksException.notFound();
    return toWebhookRecord(found.webhook, found.domains);
  }

  /** Platform notes 1.9: null or omitted leaves a field unchanged; the secret is never updated. */
  async update(
    accountId: string,
    webhookId: string,
    changes: UpdateWebhookBody,
    granted: readonly string[] | undefined,
  ): Promise<WebhookRecord> {
    if (changes.url !== undefined) checkWebhookUrl(changes.url, this.outbound);
    const updated = await this.webhooks.update(accountId, webhookId, granted, async (current) => {
      const before = { scope: current.webhook.scope, domains: current.domains };
      assertTargetGranted(before, granted);
      const target = targetOfUpdate(before, changes);
      assertTargetGranted(target, granted);
      const added = target.domains.filter((domain) => !before.domains.includes(domain));
      await this.accountDomains.requireOwned(accountId, added);
      return {
        ...(changes.name !== undefined ? { name: changes.name } : {}),
        ...(changes.url !== undefined ? { url: changes.url } : {}),
        ...(changes.enabled !== undefined ? { enabled: changes.enabled } : {}),
        ...flagColumns(changes, undefined),
        ...target,
      };
    });
    if (!updated) throw WebhooksException.notFound();
    return toWebhookRecord(updated.webhook, updated.domains);
  }

  async delete(
    accountId: string,
    webhookId: string,
    granted: readonly string[] | undefined,
  ): Promise<MessageResponse> {
    if (!(await this.webhooks.delete(accountId, webhookId, granted))) {
      throw WebhooksException.notFound();
    }
    return { message: 'webhook deleted' };
  }
}
