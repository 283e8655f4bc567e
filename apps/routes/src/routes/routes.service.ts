import { randomUUID } from 'node:crypto';

import {
  type MessageResponse,
  normalizeDomainName,
  type Page,
  type PageRequest,
} from '@envoi/contracts-core';
import {
  type CreatedRouteRecord,
  type CreateRouteBody,
  formatRecipientPattern,
  type RecipientPattern,
  type RouteRecord,
  type UpdateRouteBody,
} from '@envoi/contracts-routes';
import { type OutboundPolicy, outboundPolicyOf } from '@envoi/shared-outbound';
import { Injectable } from '@nestjs/common';

import { RouteMatchEvents } from '../matching/route-match-events';
import { RoutesConfig } from '../routes.config';
import { AccountDomains } from './account-domains.service';
import type { RouteEntity } from './route.entity';
import { toCreatedRouteRecord, toRouteRecord } from './route.mapper';
import { assertDomainGranted, checkRouteUrl, requirePattern } from './route-rules';
import { generateRouteSecret, RouteSecretCipher } from './route-secret';
import { RoutesException } from './routes.exception';
import { type NewRoute, type RouteChanges, RoutesRepository } from './routes.repository';

const TEMPORARY_ROUTE_NAME = 'Temporary stream route';

/** The columns of a pattern: as stored, and the account's domain it names (id and name). */
async function patternColumns(
  pattern: RecipientPattern,
  resolve: (domain: string) => Promise<string>,
): Promise<Pick<RouteEntity, 'recipient' | 'domainId' | 'domainName'>> {
  return {
    recipient: formatRecipientPattern(pattern),
    domainId: pattern.domain === null ? null : await resolve(pattern.domain),
    domainName: pattern.domain,
  };
}

/**
 * The routes management API (platform notes 1.8). `granted`: the domains a domain-scoped key
 * holds the operation's scope for (undefined: every domain); such a key sees and manages only
 * routes whose pattern names one of them.
 */
@Injectable()
export class RoutesService {
  private readonly outbound: OutboundPolicy;

  constructor(
    private readonly routes: RoutesRepository,
    private readonly secrets: RouteSecretCipher,
    private readonly accountDomains: AccountDomains,
    private readonly matchEvents: RouteMatchEvents,
    config: RoutesConfig,
  ) {
    this.outbound = outboundPolicyOf(config);
  }

  async list(
    accountId: string,
    domain: string | undefined,
    granted: readonly string[] | undefined,
    page: PageRequest,
  ): Promise<Page<RouteRecord>> {
    const name = domain === undefined ? undefined : normalizeDomainName(domain);
    const result = await this.routes.page(accountId, name, granted, page);
    return { ...result, data: result.data.map(toRouteRecord) };
  }

  async create(
    accountId: string,
    body: CreateRouteBody,
    granted: readonly string[] | undefined,
  ): Promise<CreatedRouteRecord> {
    checkRouteUrl(body.url, this.outbound);
    const pattern = requirePattern(body.recipient);
    assertDomainGranted(pattern.domain, granted);
    const { route, secret } = await this.insert(accountId, pattern, {
      name: body.name,
      url: body.url,
      enabled: body.enabled ?? true,
      attachments: body.attachments ?? false,
      headers: body.headers ?? false,
      groupByMessageId: body.group_by_message_id ?? false,
      stripReplies: body.strip_replies ?? false,
    });
    return toCreatedRouteRecord(route, secret);
  }

  /**
   * A temporary route for a stream listener (POST …/routes/stream?recipient=): its pattern must
   * name a domain of the account; no URL (its mail goes to the stream only), attachments (their
   * metadata: bytes are never streamed) and headers on, never listed, purged when idle.
   */
  async createTemporary(
    accountId: string,
    recipient: string,
    granted: readonly string[] | undefined,
  ): Promise<RouteEntity> {
    const pattern = requirePattern(recipient);
    if (pattern.domain === null) throw RoutesException.invalidRecipient(recipient);
    assertDomainGranted(pattern.domain, granted);
    const { route } = await this.insert(accountId, pattern, {
      name: TEMPORARY_ROUTE_NAME,
      url: '',
      enabled: true,
      attachments: true,
      headers: true,
      groupByMessageId: false,
      stripReplies: false,
      temporary: true,
      streamed: true,
      streamUsedAt: new Date(),
    });
    return route;
  }

  private async insert(
    accountId: string,
    pattern: RecipientPattern,
    fields: Omit<
      NewRoute,
      'id' | 'accountId' | 'recipient' | 'domainId' | 'domainName' | 'secretCiphertext'
    >,
  ): Promise<{ route: RouteEntity; secret: string }> {
    const id = randomUUID();
    const secret = generateRouteSecret();
    const route = await this.routes.insert({
      id,
      accountId,
      ...fields,
      ...(await patternColumns(pattern, (domain) => this.accountDomains.idOf(accountId, domain))),
      secretCiphertext: this.secrets.seal(secret, id),
    });
    this.matchEvents.changed([route.domainName]);
    return { route, secret };
  }

  async get(
    accountId: string,
    routeId: string,
    granted: readonly string[] | undefined,
  ): Promise<RouteRecord> {
    return toRouteRecord(await this.require(accountId, routeId, granted));
  }

  /** Null or omitted leaves a field unchanged; a new pattern needs the scope of its domain too. */
  async update(
    accountId: string,
    routeId: string,
    changes: UpdateRouteBody,
    granted: readonly string[] | undefined,
  ): Promise<RouteRecord> {
    if (changes.url !== undefined) checkRouteUrl(changes.url, this.outbound);
    const pattern = changes.recipient === undefined ? null : requirePattern(changes.recipient);
    if (pattern) assertDomainGranted(pattern.domain, granted);
    let domainBefore: string | null = null;
    const updated = await this.routes.update(accountId, routeId, granted, async (current) => {
      domainBefore = current.domainName;
      const columns: RouteChanges = {
        ...(changes.name !== undefined ? { name: changes.name } : {}),
        ...(changes.url !== undefined ? { url: changes.url } : {}),
        ...(changes.enabled !== undefined ? { enabled: changes.enabled } : {}),
        ...(changes.attachments !== undefined ? { attachments: changes.attachments } : {}),
        ...(changes.headers !== undefined ? { headers: changes.headers } : {}),
        ...(changes.group_by_message_id !== undefined
          ? { groupByMessageId: changes.group_by_message_id }
          : {}),
        ...(changes.strip_replies !== undefined ? { stripReplies: changes.strip_replies } : {}),
      };
      if (!pattern) return columns;
      const resolve = (domain: string) => this.accountDomains.idOf(accountId, domain);
      return { ...columns, ...(await patternColumns(pattern, resolve)) };
    });
    if (!updated) throw RoutesException.notFound();
    this.matchEvents.changed([domainBefore, updated.domainName]);
    return toRouteRecord(updated);
  }

  async delete(
    accountId: string,
    routeId: string,
    granted: readonly string[] | undefined,
  ): Promise<MessageResponse> {
    const deleted = await this.routes.delete(accountId, routeId, granted);
    if (!deleted) throw RoutesException.notFound();
    this.matchEvents.changed([deleted.domainName]);
    return { message: 'route deleted' };
  }

  /** The route, as a key with `granted` may see it; 404 otherwise. */
  async require(
    accountId: string,
    routeId: string,
    granted: readonly string[] | undefined,
  ): Promise<RouteEntity> {
    const route = await this.routes.find(accountId, routeId, granted);
    if (!route) throw RoutesException.notFound();
    return route;
  }
}
