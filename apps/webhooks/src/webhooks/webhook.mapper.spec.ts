import { WEBHOOK_EVENT_FLAGS } from '@envoi/contracts-webhooks';

import type { WebhookEntity } from './webhook.entity';
import { toCreatedWebhookRecord, toWebhookRecord } from './webhook.mapper';

function entity(overrides: Partial<WebhookEntity> = {}): WebhookEntity {
  return {
    id: '6f1c4d0e-8a1b-4c2d-9e3f-0a1b2c3d4e5f',
    seq: '7',
    accountId: '0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9',
    createdAt: new Date('2026-01-02T03:04:05.678Z'),
    updatedAt: new Date('2026-01-03T03:04:05.678Z'),
    name: 'hooks',
    url: 'https://hooks.example.com/in',
    enabled: true,
    disabledReason: null,
    scope: 'scoped',
    secretCiphertext: 'sealed',
    onReception: false,
    onDelivered: true,
    onTransientError: false,
    onFailed: false,
    onBounced: false,
    onSuppressed: false,
    onOpened: false,
    onClicked: false,
    onSuppressionCreated: false,
    onDnsError: true,
    successCount: '12',
    errorCount: '3',
    errorsSinceLastSuccess: 1,
    lastRequestAt: new Date('2026-01-04T00:00:00.000Z'),
    temporary: false,
    streamed: false,
    streamSessionId: null,
    streamLeaseUntil: null,
    streamUsedAt: null,
    ...overrides,
  };
}

describe('toWebhookRecord', () => {
  it('maps every field of 2.9 and nothing internal', () => {
    const record = toWebhookRecord(entity(), ['example.com']);
    expect(record).toEqual({
      object: 'webhook',
      id: '6f1c4d0e-8a1b-4c2d-9e3f-0a1b2c3d4e5f',
      created_at: '2026-01-02T03:04:05.678Z',
      updated_at: '2026-01-03T03:04:05.678Z',
      name: 'hooks',
      url: 'https://hooks.example.com/in',
      enabled: true,
      on_reception: false,
      on_delivered: true,
      on_transient_error: false,
      on_failed: false,
      on_bounced: false,
      on_suppressed: false,
      on_opened: false,
      on_clicked: false,
      on_suppression_created: false,
      on_dns_error: true,
      scope: 'scoped',
      domains: ['example.com'],
      success_count: 12,
      error_count: 3,
      errors_since_last_success: 1,
      last_request_at: '2026-01-04T00:00:00.000Z',
    });
    expect(Object.keys(record).filter((key) => key.startsWith('on_'))).toEqual([
      ...WEBHOOK_EVENT_FLAGS,
    ]);
  });

  it('answers [] as the domains of a global webhook and null before any request', () => {
    const record = toWebhookRecord(entity({ scope: 'global', lastRequestAt: null }), ['x.com']);
    expect(record).toMatchObject({ domains: [], last_request_at: null });
  });

  it('adds the secret only to the creation record', () => {
    expect(toCreatedWebhookRecord(entity(), [], 'envoi-whsec-x')).toMatchObject({
      secret: 'envoi-whsec-x',
    });
    expect(toWebhookRecord(entity(), [])).not.toHaveProperty('secret');
  });
});
