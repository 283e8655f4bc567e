import type { MessageResponse, PaginatedList } from '@envoi/contracts-core';
import {
  type CreatedWebhookRecord,
  CreateWebhookBody,
  UpdateWebhookBody,
  type WebhookRecord,
  WebhooksSubjects,
} from '@envoi/contracts-webhooks';
import { RpcClient } from '@envoi/shared-nats';
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';

import {
  DOMAIN_FROM_RESOURCE,
  type DomainScope,
  RequireScopes,
  ResourceDomains,
} from '../auth/scope-policy';
import { Idempotent } from '../http/edge-route';
import { BodyPipe, Ctx, type RequestContext, UuidParam } from '../http/request-context';
import { CursorCodec } from '../pagination/cursor-codec';
import { readPageRequest, toPaginatedList } from '../pagination/list-query';
import { readWebhookFilters } from './webhook-filters';

const LIST = 'webhooks';

/**
 * Webhooks (platform notes 1.9). A domain-scoped key sees and manages only webhooks linked to its
 * domains: the guard hands the service the domains the key holds the route's scope for, and the
 * service filters by them and refuses (403) a global webhook or one with a domain beyond them.
 */
@Controller('v2/accounts/:account_id/webhooks')
export class WebhooksController {
  constructor(
    private readonly rpc: RpcClient,
    private readonly cursors: CursorCodec,
  ) {}

  @Get()
  @RequireScopes(['webhooks:read:{domain}'], { domainFrom: DOMAIN_FROM_RESOURCE })
  async list(
    @Ctx() ctx: RequestContext,
    @ResourceDomains() scope: DomainScope,
    @Query() query: Record<string, string | string[] | undefined>,
  ): Promise<PaginatedList<WebhookRecord>> {
    const accountId = ctx.principal.account_id;
    const filters = readWebhookFilters(query);
    const page = readPageRequest(query, this.cursors, accountId, LIST);
    const result = await this.rpc.request(
      WebhooksSubjects.list,
      { account_id: accountId, page, filters, ...scope.restriction() },
      { requestId: ctx.requestId },
    );
    return toPaginatedList(result, this.cursors, accountId, LIST);
  }

  /** `global` needs `webhooks:write:all`; `scoped` the write scope of every listed domain. */
  @Post()
  @HttpCode(201)
  @Idempotent('secret')
  @RequireScopes(['webhooks:write:{domain}'], { domainFrom: DOMAIN_FROM_RESOURCE })
  create(
    @Ctx() ctx: RequestContext,
    @ResourceDomains() scope: DomainScope,
    @Body(new BodyPipe(CreateWebhookBody)) body: CreateWebhookBody,
  ): Promise<CreatedWebhookRecord> {
    return this.rpc.request(
      WebhooksSubjects.create,
      { account_id: ctx.principal.account_id, body, ...scope.restriction() },
      { requestId: ctx.requestId },
    );
  }

  @Get(':webhook_id')
  @RequireScopes(['webhooks:read:{domain}'], { domainFrom: DOMAIN_FROM_RESOURCE })
  get(
    @Ctx() ctx: RequestContext,
    @ResourceDomains() scope: DomainScope,
    @Param('webhook_id', new UuidParam('webhook_id')) webhookId: string,
  ): Promise<WebhookRecord> {
    return this.rpc.request(
      WebhooksSubjects.get,
      { account_id: ctx.principal.account_id, webhook_id: webhookId, ...scope.restriction() },
      { requestId: ctx.requestId },
    );
  }

  @Put(':webhook_id')
  @RequireScopes(['webhooks:write:{domain}'], { domainFrom: DOMAIN_FROM_RESOURCE })
  update(
    @Ctx() ctx: RequestContext,
    @ResourceDomains() scope: DomainScope,
    @Param('webhook_id', new UuidParam('webhook_id')) webhookId: string,
    @Body(new BodyPipe(UpdateWebhookBody)) changes: UpdateWebhookBody,
  ): Promise<WebhookRecord> {
    return this.rpc.request(
      WebhooksSubjects.update,
      {
        account_id: ctx.principal.account_id,
        webhook_id: webhookId,
        changes,
        ...scope.restriction(),
      },
      { requestId: ctx.requestId },
    );
  }

  @Delete(':webhook_id')
  @RequireScopes(['webhooks:delete:{domain}'], { domainFrom: DOMAIN_FROM_RESOURCE })
  remove(
    @Ctx() ctx: RequestContext,
    @ResourceDomains() scope: DomainScope,
    @Param('webhook_id', new UuidParam('webhook_id')) webhookId: string,
  ): Promise<MessageResponse> {
    return this.rpc.request(
      WebhooksSubjects.delete,
      { account_id: ctx.principal.account_id, webhook_id: webhookId, ...scope.restriction() },
      { requestId: ctx.requestId },
    );
  }
}
