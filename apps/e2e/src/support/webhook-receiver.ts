import {
  type EndpointBehaviour,
  type ReceivedCall,
  WEBHOOK_PAYLOAD_SCHEMAS,
  type WebhookPayloadType,
  WebhookPayloadValidator,
  WebhookReceiver,
} from '@envoi/shared-testing';
import { Webhook } from 'standardwebhooks';

import { webhooksContractFile } from './contract/contract-files';

/** A webhook payload as webhooks.yaml describes it. */
export interface WebhookPayload {
  type: string;
  /** The webhook's id; a route's call (`message.routing`) has `route_id` instead. */
  webhook_id?: string;
  route_id?: string;
  timestamp: string;
  data: Record<string, unknown>;
}

/** One call an endpoint got, with what checking it found wrong. */
export interface CheckedCall {
  endpoint: string;
  /** The `webhook-id` header: the event's id, the same on every retry. */
  messageId: string;
  payload: WebhookPayload | null;
  problems: string[];
  receivedAt: number;
}

/** The webhook (or route: message.routing) an endpoint stands for. */
export interface EndpointWebhook {
  id: string;
  secret: string;
}

/**
 * The loopback receiver of shared-testing, every call of which is checked: its payload against
 * webhooks.yaml, its signature with the official `standardwebhooks` package keyed by the UTF-8
 * bytes of the endpoint's whole secret (raw format, prefix included), its `webhook_id` against
 * the endpoint's webhook. Events are de-duplicated on the `webhook-id` header.
 */
export class CheckedWebhookReceiver {
  private readonly webhooks = new Map<string, EndpointWebhook>();
  private readonly validator = new WebhookPayloadValidator(webhooksContractFile());

  private constructor(private readonly receiver: WebhookReceiver) {}

  static async start(): Promise<CheckedWebhookReceiver> {
    return new CheckedWebhookReceiver(await WebhookReceiver.start());
  }

  url(endpoint: string): string {
    return this.receiver.url(endpoint);
  }

  /** The webhook whose calls `endpoint` takes: its id and the secret its creation returned. */
  serve(endpoint: string, webhook: EndpointWebhook): void {
    this.webhooks.set(endpoint, webhook);
  }

  behave(endpoint: string, behaviour: EndpointBehaviour): void {
    this.receiver.behave(endpoint, behaviour);
  }

  callsTo(endpoint: string): CheckedCall[] {
    return this.receiver.callsTo(endpoint).map((call) => this.check(call));
  }

  /** The endpoint's events de-duplicated on `webhook-id`: the first call of each. */
  eventsAt(endpoint: string): CheckedCall[] {
    const seen = new Map<string, CheckedCall>();
    for (const call of this.callsTo(endpoint)) {
      if (!seen.has(call.messageId)) seen.set(call.messageId, call);
    }
    return [...seen.values()];
  }

  /** Every problem found in any call so far, prefixed with its endpoint and webhook-id. */
  problems(): string[] {
    return this.receiver.calls
      .map((call) => this.check(call))
      .flatMap((call) =>
        call.problems.map((problem) => `${call.endpoint} ${call.messageId}: ${problem}`),
      );
  }

  close(): Promise<void> {
    return this.receiver.close();
  }

  private check(call: ReceivedCall): CheckedCall {
    const { endpoint, headers, body, receivedAt } = call;
    const problems: string[] = [];
    if (call.method !== 'POST') problems.push(`method ${call.method}, not POST`);
    if (!headers['content-type']?.startsWith('application/json')) {
      problems.push(`content-type ${headers['content-type'] ?? '(none)'}`);
    }
    const webhook = this.webhooks.get(endpoint);
    if (webhook === undefined) problems.push('no webhook registered for the endpoint');
    else {
      try {
        new Webhook(webhook.secret, { format: 'raw' }).verify(body, headers);
      } catch (error) {
        problems.push(`signature: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    const checked = { endpoint, messageId: headers['webhook-id'] ?? '', receivedAt, problems };
    let payload: WebhookPayload;
    try {
      payload = JSON.parse(body) as WebhookPayload;
    } catch {
      problems.push('the body is not JSON');
      return { ...checked, payload: null };
    }
    const owner = payload.type === 'message.routing' ? 'route_id' : 'webhook_id';
    if (webhook && payload[owner] !== webhook.id) {
      problems.push(`${owner} ${payload[owner]}, not the endpoint's ${webhook.id}`);
    }
    if (Object.hasOwn(WEBHOOK_PAYLOAD_SCHEMAS, payload.type)) {
      problems.push(...this.validator.violations(payload.type as WebhookPayloadType, payload));
    } else problems.push(`${payload.type} is not a webhook event type`);
    return { ...checked, payload };
  }
}
