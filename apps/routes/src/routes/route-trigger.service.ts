import type { MessageResponse } from '@envoi/contracts-core';
import { ListenerStreams } from '@envoi/shared-listener-streams';
import { Injectable } from '@nestjs/common';

import { RouteCaller } from '../delivery/route-caller';
import { RouteSecretCipher } from './route-secret';
import { RoutesService } from './routes.service';
import { sampleRoutingPayload } from './sample-routing';

/**
 * POST …/routes/{id}/trigger: a sample `message.routing` POSTed to the route URL now, signed and
 * guarded like every route call, and buffered for the route's stream when it has one (a temporary
 * route has only its stream). Samples leave the route's counters alone; the answer says how the
 * call went.
 */
@Injectable()
export class RouteTrigger {
  constructor(
    private readonly routes: RoutesService,
    private readonly secrets: RouteSecretCipher,
    private readonly caller: RouteCaller,
    private readonly streams: ListenerStreams,
  ) {}

  async trigger(
    accountId: string,
    routeId: string,
    granted: readonly string[] | undefined,
  ): Promise<MessageResponse> {
    const route = await this.routes.require(accountId, routeId, granted);
    const now = new Date();
    const payload = sampleRoutingPayload(route, now);
    if (route.streamed) {
      await this.streams.append([
        {
          targetId: route.id,
          eventId: payload.data.id,
          eventType: payload.type,
          body: JSON.stringify(payload),
        },
      ]);
    }
    if (route.temporary) return { message: 'sample message.routing sent to the route stream' };
    const result = await this.caller.post(
      route.url,
      this.secrets.open(route),
      payload.data.id,
      JSON.stringify(payload),
      now,
    );
    if (result.type === 'response' && result.ok) {
      return { message: `sample message.routing delivered (HTTP ${result.status})` };
    }
    const reason =
      result.type === 'response' ? `HTTP ${result.status}` : `${result.kind}: ${result.message}`;
    return { message: `sample message.routing not delivered (${reason})` };
  }
}
