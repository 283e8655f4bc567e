import type { PaginatedList } from '@envoi/contracts-core';
import {
  type TriggeredWebhookEventsRecord,
  TriggerWebhookBody,
  type WebhookAttemptRecord,
  WebhookDeliveriesSubjects,
  type WebhookDeliveryRecord,
} from '@envoi/contracts-webhooks';
import { RpcClient } from '@envoi/shared-nats';
import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';

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

const LIST = 'webhook-attempts';

/**
 * Beyond the reference contract: an endpoint's delivery attempts, a manual retry of one delivery,
 * and sample events (platform notes 1.12). The scopes and domain visibility of the webhook's own
 * routes apply: a key that cannot see the webhook gets 404.
 */
@Controller('v2/accounts/:account_id/webhooks/:webhook_id')
export class WebhookDeliveriesController {
  constructor(
    private readonly rpc: RpcClient,
    private readonly cursors: CursorCodec,
  ) {}

  @Get('deliveries')
  @RequireScopes(['webhooks:read:{domain}'], { domainFrom: DOMAIN_FROM_RESOURCE })
  async listAttempts(
    @Ctx() ctx: RequestContext,
    @ResourceDomains() scope: DomainScope,
    @Param('webhook_id', new UuidParam('webhook_id')) webhookId: string,
    @Query() query: Record<string, string | string[] | undefined>,
  ): Promise<PaginatedList<WebhookAttemptRecord>> {
    const accountId = ctx.principal.account_id;
    // Cursors are bound to the webhook: one endpoint's cursor does not page another's list.
    const list = `${LIST}:${webhookId}`;
    const page = readPageRequest(query, this.cursors, accountId, list);
    const result = await this.rpc.request(
      WebhookDeliveriesSubjects.listAttempts,
      { account_id: accountId, webhook_id: webhookId, page, ...scope.restriction() },
      { requestId: ctx.requestId },
    );
    return toPaginatedList(result, this.cursors, accountId, list);
  }

  /** Not a creation: sends the same delivery (same webhook-id) again. */
  @Post('deliveries/:delivery_id/retry')
  @HttpCode(200)
  @RequireScopes(['webhooks:write:{domain}'], { domainFrom: DOMAIN_FROM_RESOURCE })
  retry(
    @Ctx() ctx: RequestContext,
    @ResourceDomains() scope: DomainScope,
    @Param('webhook_id', new UuidParam('webhook_id')) webhookId: string,
    @Param('delivery_id', new UuidParam('delivery_id')) deliveryId: string,
  ): Promise<WebhookDeliveryRecord> {
    return this.rpc.request(
      WebhookDeliveriesSubjects.retry,
      {
        account_id: ctx.principal.account_id,
        webhook_id: webhookId,
        delivery_id: deliveryId,
        ...scope.restriction(),
      },
      { requestId: ctx.requestId },
    );
  }

  @Post('trigger')
  @HttpCode(202)
  @Idempotent()
  @RequireScopes(['webhooks:write:{domain}'], { domainFrom: DOMAIN_FROM_RESOURCE })
  trigger(
    @Ctx() ctx: RequestContext,
    @ResourceDomains() scope: DomainScope,
    @Param('webhook_id', new UuidParam('webhook_id')) webhookId: string,
    @Body(new BodyPipe(TriggerWebhookBody)) body: TriggerWebhookBody,
  ): Promise<TriggeredWebhookEventsRecord> {
    return this.rpc.request(
      WebhookDeliveriesSubjects.trigger,
      { account_id: ctx.principal.account_id, webhook_id: webhookId, body, ...scope.restriction() },
      { requestId: ctx.requestId },
    );
  }
}
