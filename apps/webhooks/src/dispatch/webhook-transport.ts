import { OutboundClient, outboundPolicyOf, type OutboundResult } from '@envoi/shared-outbound';
import { Injectable, type OnModuleDestroy } from '@nestjs/common';

import { WebhooksConfig } from '../webhooks.config';

/** What came back from an endpoint. */
export interface TransportResponse {
  status: number;
  /** The start of the response body (its first 1 KB, printable text). */
  bodyPrefix: string;
  durationMs: number;
}

/** Why no response came (blocked by the outbound policy, timeout, refused, TLS …). */
export interface TransportFailure {
  error: string;
  durationMs: number;
}

export type TransportResult = TransportResponse | TransportFailure;

/** One POST to an endpoint; never throws. */
export abstract class WebhookTransport {
  abstract post(
    url: string,
    headers: Readonly<Record<string, string>>,
    body: string,
    timeoutMs: number,
  ): Promise<TransportResult>;
}

export function isResponse(result: TransportResult): result is TransportResponse {
  return 'status' in result;
}

function transportResultOf(result: OutboundResult): TransportResult {
  if (result.type === 'response') {
    return { status: result.status, bodyPrefix: result.bodyPrefix, durationMs: result.durationMs };
  }
  return { error: `${result.kind}: ${result.message}`, durationMs: result.durationMs };
}

/**
 * Calls through the guarded outbound client (@envoi/shared-outbound): the address actually
 * connected to is checked against OUTBOUND_ALLOW_HTTP / OUTBOUND_ALLOW_CIDRS, redirects are not
 * followed (a 3xx is a response, hence a failure), the timeout bounds the whole call and at most
 * 64 KB of a response is read.
 */
@Injectable()
export class GuardedWebhookTransport extends WebhookTransport implements OnModuleDestroy {
  private readonly client: OutboundClient;

  constructor(config: WebhooksConfig) {
    super();
    this.client = new OutboundClient({ policy: outboundPolicyOf(config) });
  }

  post(
    url: string,
    headers: Readonly<Record<string, string>>,
    body: string,
    timeoutMs: number,
  ): Promise<TransportResult> {
    return this.client.postJson(url, headers, body, { timeoutMs }).then(transportResultOf);
  }

  onModuleDestroy(): Promise<void> {
    return this.client.close();
  }
}
