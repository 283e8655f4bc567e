import type { MessageResponse, Page } from '@envoi/contracts-core';
import {
  type CreatedRouteRecord,
  CreateRouteRequest,
  type DomainRouteSet,
  DomainRoutesRequest,
  ListRoutesRequest,
  MatchRecipientRequest,
  type RecipientMatch,
  type RouteRecord,
  RouteRef,
  RoutesSubjects,
  UpdateRouteRequest,
} from '@envoi/contracts-routes';
import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';

import { RecipientMatcher } from '../matching/recipient-matcher.service';
import { RouteTrigger } from './route-trigger.service';
import { RoutesService } from './routes.service';

@Controller()
export class RoutesController {
  constructor(
    private readonly routes: RoutesService,
    private readonly trigger: RouteTrigger,
    private readonly matcher: RecipientMatcher,
  ) {}

  @MessagePattern(RoutesSubjects.list.name)
  list(@Payload() request: ListRoutesRequest): Promise<Page<RouteRecord>> {
    return this.routes.list(request.account_id, request.domain, request.domains, request.page);
  }

  @MessagePattern(RoutesSubjects.create.name)
  create(@Payload() request: CreateRouteRequest): Promise<CreatedRouteRecord> {
    return this.routes.create(request.account_id, request.body, request.domains);
  }

  @MessagePattern(RoutesSubjects.get.name)
  get(@Payload() request: RouteRef): Promise<RouteRecord> {
    return this.routes.get(request.account_id, request.route_id, request.domains);
  }

  @MessagePattern(RoutesSubjects.update.name)
  update(@Payload() request: UpdateRouteRequest): Promise<RouteRecord> {
    return this.routes.update(
      request.account_id,
      request.route_id,
      request.changes,
      request.domains,
    );
  }

  @MessagePattern(RoutesSubjects.delete.name)
  delete(@Payload() request: RouteRef): Promise<MessageResponse> {
    return this.routes.delete(request.account_id, request.route_id, request.domains);
  }

  @MessagePattern(RoutesSubjects.trigger.name)
  triggerSample(@Payload() request: RouteRef): Promise<MessageResponse> {
    return this.trigger.trigger(request.account_id, request.route_id, request.domains);
  }

  @MessagePattern(RoutesSubjects.matchRecipient.name)
  matchRecipient(@Payload() request: MatchRecipientRequest): Promise<RecipientMatch> {
    return this.matcher.match(request.recipient);
  }

  @MessagePattern(RoutesSubjects.domainRoutes.name)
  domainRoutes(@Payload() request: DomainRoutesRequest): Promise<DomainRouteSet> {
    return this.matcher.routeSet(request.domain);
  }
}
