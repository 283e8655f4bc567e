import { WebhookStreamSubjects } from '@envoi/contracts-webhooks';
import { RpcClient } from '@envoi/shared-nats';
import { Controller, Query, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

import { type DomainScope, ResourceDomains } from '../auth/scope-policy';
import { Ctx, type RequestContext } from '../http/request-context';
import {
  OpensStream,
  type QueryParams,
  readStreamQuery,
  readUuidParameter,
  type StreamOpenedRecord,
  streamWsUrl,
} from './stream-query';

/** `webhook_id`, optional: a uuid given once; nothing else. */
export function readStreamWebhookId(query: QueryParams): string | undefined {
  return readUuidParameter('webhook_id', readStreamQuery(query, ['webhook_id']).webhook_id);
}

/**
 * Beyond the reference contract, for `webhooks listen`-style tools: opens a webhook's stream. No
 * `webhook_id` creates a temporary webhook (global, so `webhooks:write:all`); an existing one needs
 * the rights to update it. The WebSocket is served by StreamListeners.
 */
@Controller('v2/accounts/:account_id/webhooks')
export class WebhookStreamController {
  constructor(private readonly rpc: RpcClient) {}

  @OpensStream('webhooks:write:{domain}')
  async open(
    @Ctx() ctx: RequestContext,
    @ResourceDomains() scope: DomainScope,
    @Query() query: QueryParams,
    @Req() request: FastifyRequest,
  ): Promise<StreamOpenedRecord<'webhook_id'>> {
    const webhookId = readStreamWebhookId(query);
    const accountId = ctx.principal.account_id;
    const opened = await this.rpc.request(
      WebhookStreamSubjects.open,
      {
        account_id: accountId,
        ...(webhookId === undefined ? {} : { webhook_id: webhookId }),
        ...scope.restriction(),
      },
      { requestId: ctx.requestId },
    );
    return {
      webhook_id: opened.webhook_id,
      ws_url: streamWsUrl(request.host, 'webhooks', accountId, opened.webhook_id),
    };
  }
}
