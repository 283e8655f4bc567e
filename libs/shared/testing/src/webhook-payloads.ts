import { readFileSync } from 'node:fs';
import path from 'node:path';

import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';

const WORKSPACE_ROOT = path.resolve(__dirname, '../../../..');

/** The reference webhooks.yaml: beside openapi.yaml in apps/e2e/contract/reference, or E2E_CONTRACT_DIR. */
export function referenceWebhooksFile(): string {
  const directory =
    process.env['E2E_CONTRACT_DIR'] ?? path.join(WORKSPACE_ROOT, 'apps/e2e/contract/reference');
  return path.join(directory, 'webhooks.yaml');
}

/** The payload schema of each event type (webhooks.yaml `components/schemas`). */
export const WEBHOOK_PAYLOAD_SCHEMAS = {
  'message.reception': 'MessageReceptionWebhookPayload',
  'message.delivered': 'MessageDeliveredWebhookPayload',
  'message.transient_error': 'MessageTransientErrorWebhookPayload',
  'message.failed': 'MessageFailedWebhookPayload',
  'message.bounced': 'MessageBouncedWebhookPayload',
  'message.suppressed': 'MessageSuppressedWebhookPayload',
  'message.opened': 'MessageOpenedWebhookPayload',
  'message.clicked': 'MessageClickedWebhookPayload',
  'suppression.created': 'SuppressionWebhookPayload',
  'domain.dns_error': 'DomainWebhookPayload',
  'message.routing': 'RouteWebhookPayload',
} as const;
export type WebhookPayloadType = keyof typeof WEBHOOK_PAYLOAD_SCHEMAS;

/**
 * OpenAPI and webhooks.yaml keywords that never change a validation's outcome; `components` lets
 * the whole document be one schema whose `#/components/...` references resolve inside it.
 */
const ANNOTATION_KEYWORDS = [
  'components',
  'example',
  'discriminator',
  'xml',
  'externalDocs',
  'x-deprecated-values',
];

/**
 * Validates webhook payloads against the reference webhooks.yaml. A field the schema does not
 * list is allowed (the schemas allow it), so a stream event's `data` can be checked as it is.
 */
export class WebhookPayloadValidator {
  private readonly ajv: Ajv2020;

  constructor(file: string = referenceWebhooksFile()) {
    const document = parse(readFileSync(file, 'utf8')) as { components?: unknown };
    this.ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
    addFormats(this.ajv);
    for (const keyword of ANNOTATION_KEYWORDS) this.ajv.addKeyword(keyword);
    this.ajv.addSchema({ $id: 'webhooks', components: document.components }, 'webhooks');
  }

  /** The violations of `payload` (empty when it conforms), one line each. */
  violations(type: WebhookPayloadType, payload: unknown): string[] {
    const pointer = `webhooks#/components/schemas/${WEBHOOK_PAYLOAD_SCHEMAS[type]}`;
    const validate = this.ajv.getSchema(pointer);
    if (!validate) throw new Error(`webhooks.yaml has no schema ${pointer}`);
    if (validate(payload)) return [];
    return (validate.errors ?? []).map(
      (error) =>
        `${error.instancePath || '(payload)'} ${error.message ?? 'is invalid'} (${error.schemaPath})`,
    );
  }

  /**
   * The violations of a stream event taken as the payload sent for it: its `type`, `timestamp`
   * and `data`, with a webhook id.
   */
  eventViolations(
    event: { type: string; timestamp: string; data: unknown },
    webhookId = '00000000-0000-4000-8000-000000000000',
  ): string[] {
    if (!Object.hasOwn(WEBHOOK_PAYLOAD_SCHEMAS, event.type)) {
      return [`${event.type} is not a webhook event type`];
    }
    return this.violations(event.type as WebhookPayloadType, {
      type: event.type,
      webhook_id: webhookId,
      timestamp: event.timestamp,
      data: event.data,
    });
  }
}
