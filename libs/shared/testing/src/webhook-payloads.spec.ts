import { readFileSync } from 'node:fs';

import { parse } from 'yaml';

import {
  referenceWebhooksFile,
  WEBHOOK_PAYLOAD_SCHEMAS,
  type WebhookPayloadType,
  WebhookPayloadValidator,
} from './webhook-payloads';

const validator = new WebhookPayloadValidator();

const messageData = {
  account_id: '4cdd7bdd-294e-4762-892f-83d40abf5a87',
  event: 'on_delivered',
  from: 'sender@example.com',
  recipient: 'recipient@example.com',
  subject: 'Welcome',
  message_id_header: '<id@example.com>',
  id: '407926766d2711f09b30960002cafe7c',
  is_bot: false,
};

/** The example payload webhooks.yaml gives for each event type. */
function referenceExamples(): Array<[string, unknown]> {
  const document = parse(readFileSync(referenceWebhooksFile(), 'utf8')) as {
    webhooks: Record<
      string,
      { post: { requestBody: { content: Record<string, { example: unknown }> } } }
    >;
  };
  return Object.entries(document.webhooks).map(([type, operation]) => [
    type,
    operation.post.requestBody.content['application/json']?.example,
  ]);
}

describe('WebhookPayloadValidator', () => {
  it('knows every event type of webhooks.yaml, and accepts its example', () => {
    const examples = referenceExamples();
    expect(examples.map(([type]) => type).sort()).toEqual(
      Object.keys(WEBHOOK_PAYLOAD_SCHEMAS).sort(),
    );
    for (const [type, example] of examples) {
      expect([type, validator.violations(type as WebhookPayloadType, example)]).toEqual([type, []]);
    }
  });

  it('accepts a payload of webhooks.yaml, extra data fields included', () => {
    expect(
      validator.eventViolations({
        type: 'message.delivered',
        timestamp: '2024-05-06T09:50:16.687031577Z',
        data: { ...messageData, status: 'Delivered' },
      }),
    ).toEqual([]);
  });

  it('reports a missing field, a wrong type and an unknown event type', () => {
    const withoutSubject = { ...messageData, subject: undefined };
    expect(
      validator.eventViolations({
        type: 'message.delivered',
        timestamp: '2024-05-06T09:50:16Z',
        data: withoutSubject,
      }),
    ).toEqual([expect.stringContaining("must have required property 'subject'")]);
    expect(
      validator.eventViolations({
        type: 'suppression.created',
        timestamp: '2024-05-06T09:50:16Z',
        data: {
          account_id: messageData.account_id,
          recipient: 'a@example.com',
          created_at: '2024-05-06T09:50:16Z',
          expires_at: '2024-06-05T09:50:16Z',
          reason: null,
          sending_domain: 'example.com',
        },
      }),
    ).toEqual([expect.stringMatching(/^\/data\/reason must be string/)]);
    expect(validator.eventViolations({ type: 'message.unknown', timestamp: '', data: {} })).toEqual(
      ['message.unknown is not a webhook event type'],
    );
  });
});
