import { WebhookStreamSubjects } from '@envoi/contracts-webhooks';
import { RpcClient } from '@envoi/shared-nats';
import { Controller, HttpCode, Post, Query, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

import {
  DOMAIN_FROM_RESOURCE,
  type DomainScope,
  RequireScopes,
  ResourceDomains,
} from '../auth/scope-policy';
import { ApiError } from '../errors/api-error';
import { Idempotent } from '../http/edge-route';
import { Ctx, type RequestContext, UUID_PATTERN } from '../http/request-context';
import { webhookListenPath } from '../stream/webhook-stream-listeners';

type QueryParams = Record<string, string | string[] | undefined>;

/** The answer to POST …/webhooks/stream (platform notes 1.12). */
export interface WebhookStreamRecord {
  webhook_id: string;
  /** Where to connect, with `api_secret_key` (and `force_reconnect=true` to replace a listener). */
  ws_url: string;
}

/** `webhook_id`, optional: a uuid given once; nothing else. */
export function readStreamWebhookId(query: QueryParams): string | undefined {
  const unknown = Object.keys(query).filter((name) => name !== 'webhook_id');
  if (unknown.length > 0) throw new ApiError(400, `unknown query parameter ${unknown[0]}`);
  const value = query['webhook_id'];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !UUID_PATTERN.test(value)) {
    throw new ApiError(400, 'webhook_id must be a uuid');
  }
  return value.toLowerCase();
}

/**
 * Beyond the reference contract, for `webhooks listen`-style tools: opens a webhook's stream. No
 * `webhook_id` creates a temporary webhook (global, so `webhooks:write:all`); an existing one needs
 * the rights to update it. The WebSocket is served by WebhookStreamListeners.
 */
@Controller('v2/accounts/:account_id/webhooks')
export class WebhookStreamController {
  constructor(private readonly rpc: RpcClient) {}

  @Post('stream')
  @HttpCode(200)
  // Creates a temporary webhook: a retry with the same Idempotency-Key answers the same one.
  @Idempotent()
  @RequireScopes(['webhooks:write:{domain}'], { domainFrom: DOMAIN_FROM_RESOURCE })
  async open(
    @Ctx() ctx: RequestContext,
    @ResourceDomains() scope: DomainScope,
    @Query() query: QueryParams,
    @Req() request: FastifyRequest,
  ): Promise<WebhookStreamRecord> {
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
    // The gateway serves HTTPS only, so its WebSockets are wss://, on the host the client called.
    return {
      webhook_id: opened.webhook_id,
      ws_url: `wss://${request.host}${webhookListenPath(accountId, opened.webhook_id)}`,
    };
  }
}
