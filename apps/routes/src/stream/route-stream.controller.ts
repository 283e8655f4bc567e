import {
  type OpenedRouteStreamRecord,
  OpenRouteStreamRequest,
  RouteStreamSubjects,
} from '@envoi/contracts-routes';
import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';

import { RouteStreamService } from './route-stream.service';

/** Opening a route stream; the listener requests are served by the listener-streams controller. */
@Controller()
export class RouteStreamController {
  constructor(private readonly streams: RouteStreamService) {}

  @MessagePattern(RouteStreamSubjects.open.name)
  open(@Payload() request: OpenRouteStreamRequest): Promise<OpenedRouteStreamRecord> {
    return this.streams.open(
      request.account_id,
      request.route_id,
      request.recipient,
      request.domains,
    );
  }
}
