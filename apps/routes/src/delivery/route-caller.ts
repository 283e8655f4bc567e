import {
  OutboundClient,
  outboundPolicyOf,
  type OutboundResult,
  signedHeaders,
} from '@envoi/shared-outbound';
import { Injectable, type OnModuleDestroy } from '@nestjs/common';

import { RoutesConfig } from '../routes.config';

/**
 * POSTs message.routing bodies to route URLs, signed with the route's secret exactly as webhooks
 * are (`webhook-id` is the call's id, the same on retries), through the guarded outbound client:
 * the address connected to is checked, no redirects, ROUTE_TIMEOUT_MS for the whole call.
 */
@Injectable()
export class RouteCaller implements OnModuleDestroy {
  private readonly client: OutboundClient;

  constructor(private readonly config: RoutesConfig) {
    this.client = new OutboundClient({ policy: outboundPolicyOf(config) });
  }

  post(
    url: string,
    secret: string,
    callId: string,
    body: string,
    now: Date,
  ): Promise<OutboundResult> {
    const headers = signedHeaders(secret, callId, Math.floor(now.getTime() / 1000), body);
    return this.client.postJson(url, { ...headers }, body, {
      timeoutMs: this.config.ROUTE_TIMEOUT_MS,
    });
  }

  onModuleDestroy(): Promise<void> {
    return this.client.close();
  }
}
