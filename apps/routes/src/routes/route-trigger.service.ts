import type { MessageResponse } from '@envoi/contracts-core';
import { OutboundClient, outboundPolicyOf, signedHeaders } from '@envoi/shared-outbound';
import { Injectable, type OnModuleDestroy } from '@nestjs/common';

import { RoutesConfig } from '../routes.config';
import { RouteSecretCipher } from './route-secret';
import { RoutesService } from './routes.service';
import { sampleRoutingPayload } from './sample-routing';

/**
 * POST …/routes/{id}/trigger: a sample `message.routing` POSTed to the route URL now, signed with
 * the route's secret like every route call, through the guarded outbound client (the address
 * connected to is checked, no redirects, ROUTE_TIMEOUT_MS for the whole call). Samples leave the
 * route's counters alone; the answer says how the call went.
 */
@Injectable()
export class RouteTrigger implements OnModuleDestroy {
  private readonly client: OutboundClient;

  constructor(
    private readonly routes: RoutesService,
    private readonly secrets: RouteSecretCipher,
    private readonly config: RoutesConfig,
  ) {
    this.client = new OutboundClient({ policy: outboundPolicyOf(config) });
  }

  async trigger(
    accountId: string,
    routeId: string,
    granted: readonly string[] | undefined,
  ): Promise<MessageResponse> {
    const route = await this.routes.require(accountId, routeId, granted);
    const now = new Date();
    const payload = sampleRoutingPayload(route, now);
    const body = JSON.stringify(payload);
    const headers = signedHeaders(
      this.secrets.open(route),
      payload.data.id,
      Math.floor(now.getTime() / 1000),
      body,
    );
    const result = await this.client.postJson(route.url, { ...headers }, body, {
      timeoutMs: this.config.ROUTE_TIMEOUT_MS,
    });
    if (result.type === 'response' && result.ok) {
      return { message: `sample message.routing delivered (HTTP ${result.status})` };
    }
    const reason =
      result.type === 'response' ? `HTTP ${result.status}` : `${result.kind}: ${result.message}`;
    return { message: `sample message.routing not delivered (${reason})` };
  }

  onModuleDestroy(): void {
    this.client.close();
  }
}
