import { RouteStreamSubjects } from '@envoi/contracts-routes';
import { RpcClient } from '@envoi/shared-nats';
import { Controller, Query, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

import { type DomainScope, ResourceDomains } from '../auth/scope-policy';
import { ApiError } from '../errors/api-error';
import { Ctx, type RequestContext } from '../http/request-context';
import {
  OpensStream,
  type QueryParams,
  readStreamQuery,
  readUuidParameter,
  type StreamOpenedRecord,
  streamWsUrl,
} from './stream-query';

/** What a route stream is opened on: an existing route, or a pattern for a temporary one. */
export type RouteStreamTarget = { route_id: string } | { recipient: string };

/** Exactly one of `route_id` (a uuid) and `recipient` (a pattern), each once; nothing else. */
export function readRouteStreamTarget(query: QueryParams): RouteStreamTarget {
  const read = readStreamQuery(query, ['route_id', 'recipient']);
  const routeId = readUuidParameter('route_id', read.route_id);
  if ((routeId === undefined) === (read.recipient === undefined)) {
    throw new ApiError(400, 'give exactly one of route_id and recipient');
  }
  return routeId === undefined ? { recipient: read.recipient ?? '' } : { route_id: routeId };
}

/**
 * Beyond the reference contract, for `routes listen`-style tools: opens a route's stream, of an
 * existing route (which keeps its POSTs) or of a temporary route made for `recipient` (no URL,
 * never listed, purged when idle). Either way it needs the write scope of the pattern's domain.
 * The WebSocket is served by StreamListeners.
 */
@Controller('v2/accounts/:account_id/routes')
export class RouteStreamController {
  constructor(private readonly rpc: RpcClient) {}

  @OpensStream('routes:write:{domain}')
  async open(
    @Ctx() ctx: RequestContext,
    @ResourceDomains() scope: DomainScope,
    @Query() query: QueryParams,
    @Req() request: FastifyRequest,
  ): Promise<StreamOpenedRecord<'route_id'>> {
    const target = readRouteStreamTarget(query);
    const accountId = ctx.principal.account_id;
    const opened = await this.rpc.request(
      RouteStreamSubjects.open,
      { account_id: accountId, ...target, ...scope.restriction() },
      { requestId: ctx.requestId },
    );
    return {
      route_id: opened.route_id,
      ws_url: streamWsUrl(request.host, 'routes', accountId, opened.route_id),
    };
  }
}
