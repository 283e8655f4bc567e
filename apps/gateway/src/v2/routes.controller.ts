import type { MessageResponse, PaginatedList } from '@envoi/contracts-core';
import {
  type CreatedRouteRecord,
  CreateRouteBody,
  type RouteRecord,
  RoutesSubjects,
  UpdateRouteBody,
} from '@envoi/contracts-routes';
import { RpcClient } from '@envoi/shared-nats';
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';

import {
  DOMAIN_FROM_RESOURCE,
  type DomainScope,
  RequireScopes,
  ResourceDomains,
} from '../auth/scope-policy';
import { ApiError } from '../errors/api-error';
import { Idempotent } from '../http/edge-route';
import { BodyPipe, Ctx, type RequestContext, UuidParam } from '../http/request-context';
import { CursorCodec } from '../pagination/cursor-codec';
import { readPageRequest, toPaginatedList } from '../pagination/list-query';

const LIST = 'routes';

/** The `domain` query of getRoutes: required for a domain-scoped key (platform notes 1.8). */
function readDomainQuery(
  query: Record<string, string | string[] | undefined>,
  scope: DomainScope,
): string | undefined {
  const domain = query['domain'];
  if (Array.isArray(domain)) throw new ApiError(400, 'domain must be given once');
  if (domain === undefined || domain === '') {
    if (scope.domains !== undefined) {
      throw new ApiError(400, 'domain is required for a domain-scoped api key');
    }
    return undefined;
  }
  return domain;
}

/**
 * Inbound routes (platform notes 1.8, 2.8). The domain a `{domain}` scope is checked against is
 * the one the recipient pattern names: the guard hands the service the domains the key holds the
 * scope for, and the service shows only routes of those domains and refuses (403) a pattern of
 * another domain or of none.
 */
@Controller('v2/accounts/:account_id/routes')
export class RoutesController {
  constructor(
    private readonly rpc: RpcClient,
    private readonly cursors: CursorCodec,
  ) {}

  @Get()
  @RequireScopes(['routes:read:{domain}'], { domainFrom: DOMAIN_FROM_RESOURCE })
  async list(
    @Ctx() ctx: RequestContext,
    @ResourceDomains() scope: DomainScope,
    @Query() query: Record<string, string | string[] | undefined>,
  ): Promise<PaginatedList<RouteRecord>> {
    const accountId = ctx.principal.account_id;
    const domain = readDomainQuery(query, scope);
    const page = readPageRequest(query, this.cursors, accountId, LIST);
    const result = await this.rpc.request(
      RoutesSubjects.list,
      {
        account_id: accountId,
        page,
        ...(domain === undefined ? {} : { domain }),
        ...scope.restriction(),
      },
      { requestId: ctx.requestId },
    );
    return toPaginatedList(result, this.cursors, accountId, LIST);
  }

  @Post()
  @HttpCode(201)
  @Idempotent('secret')
  @RequireScopes(['routes:write:{domain}'], { domainFrom: DOMAIN_FROM_RESOURCE })
  create(
    @Ctx() ctx: RequestContext,
    @ResourceDomains() scope: DomainScope,
    @Body(new BodyPipe(CreateRouteBody)) body: CreateRouteBody,
  ): Promise<CreatedRouteRecord> {
    return this.rpc.request(
      RoutesSubjects.create,
      { account_id: ctx.principal.account_id, body, ...scope.restriction() },
      { requestId: ctx.requestId },
    );
  }

  @Get(':route_id')
  @RequireScopes(['routes:read:{domain}'], { domainFrom: DOMAIN_FROM_RESOURCE })
  get(
    @Ctx() ctx: RequestContext,
    @ResourceDomains() scope: DomainScope,
    @Param('route_id', new UuidParam('route_id')) routeId: string,
  ): Promise<RouteRecord> {
    return this.rpc.request(
      RoutesSubjects.get,
      { account_id: ctx.principal.account_id, route_id: routeId, ...scope.restriction() },
      { requestId: ctx.requestId },
    );
  }

  /** Needs the write scope of the route's domain and, when the pattern changes, of the new one. */
  @Put(':route_id')
  @RequireScopes(['routes:write:{domain}'], { domainFrom: DOMAIN_FROM_RESOURCE })
  update(
    @Ctx() ctx: RequestContext,
    @ResourceDomains() scope: DomainScope,
    @Param('route_id', new UuidParam('route_id')) routeId: string,
    @Body(new BodyPipe(UpdateRouteBody)) changes: UpdateRouteBody,
  ): Promise<RouteRecord> {
    return this.rpc.request(
      RoutesSubjects.update,
      {
        account_id: ctx.principal.account_id,
        route_id: routeId,
        changes,
        ...scope.restriction(),
      },
      { requestId: ctx.requestId },
    );
  }

  @Delete(':route_id')
  @RequireScopes(['routes:delete:{domain}'], { domainFrom: DOMAIN_FROM_RESOURCE })
  remove(
    @Ctx() ctx: RequestContext,
    @ResourceDomains() scope: DomainScope,
    @Param('route_id', new UuidParam('route_id')) routeId: string,
  ): Promise<MessageResponse> {
    return this.rpc.request(
      RoutesSubjects.delete,
      { account_id: ctx.principal.account_id, route_id: routeId, ...scope.restriction() },
      { requestId: ctx.requestId },
    );
  }

  /** A sample `message.routing` POSTed to the route URL now (the CLI's `routes trigger`). */
  @Post(':route_id/trigger')
  @HttpCode(200)
  @Idempotent()
  @RequireScopes(['routes:write:{domain}'], { domainFrom: DOMAIN_FROM_RESOURCE })
  trigger(
    @Ctx() ctx: RequestContext,
    @ResourceDomains() scope: DomainScope,
    @Param('route_id', new UuidParam('route_id')) routeId: string,
  ): Promise<MessageResponse> {
    return this.rpc.request(
      RoutesSubjects.trigger,
      { account_id: ctx.principal.account_id, route_id: routeId, ...scope.restriction() },
      { requestId: ctx.requestId },
    );
  }
}
