import { WebhookAttemptEntity } from '../dispatch/webhook-attempt.entity';
import { WebhookDeliveryEntity } from '../dispatch/webhook-delivery.entity';
import { toWebhookAttemptRecord, toWebhookDeliveryRecord } from './webhook-delivery.mapper';

function delivery(fields: Partial<WebhookDeliveryEntity>): WebhookDeliveryEntity {
  return Object.assign(new WebhookDeliveryEntity(), {
    id: 'a1a1a1a1-0000-4000-8000-000000000001',
    webhookId: 'b2b2b2b2-0000-4000-8000-000000000002',
    eventId: 'evt-1',
    eventType: 'message.delivered',
    state: 'pending',
    attempts: 2,
    nextAttemptAt: new Date('2026-11-25T10:00:05Z'),
    createdAt: new Date('2026-11-25T10:00:00Z'),
    updatedAt: new Date('2026-11-25T10:00:01Z'),
    ...fields,
  });
}

describe('toWebhookDeliveryRecord', () => {
  it('shows the next attempt of a pending delivery', () => {
    expect(toWebhookDeliveryRecord(delivery({}))).toEqual({
      object: 'webhook_delivery',
      id: 'a1a1a1a1-0000-4000-8000-000000000001',
      webhook_id: 'b2b2b2b2-0000-4000-8000-000000000002',
      event_id: 'evt-1',
      event_type: 'message.delivered',
      state: 'pending',
      attempts: 2,
      next_attempt_at: '2026-11-25T10:00:05.000Z',
      created_at: '2026-11-25T10:00:00.000Z',
      updated_at: '2026-11-25T10:00:01.000Z',
    });
  });

  it.each(['delivered', 'given_up'] as const)('shows no next attempt once %s', (state) => {
    expect(toWebhookDeliveryRecord(delivery({ state })).next_attempt_at).toBeNull();
  });
});

describe('toWebhookAttemptRecord', () => {
  const attempt = Object.assign(new WebhookAttemptEntity(), {
    seq: '7',
    deliveryId: 'a1a1a1a1-0000-4000-8000-000000000001',
    webhookId: 'b2b2b2b2-0000-4000-8000-000000000002',
    eventId: 'evt-1',
    eventType: 'message.delivered',
    attempt: 1,
    attemptedAt: new Date('2026-11-25T10:00:00Z'),
    responseStatus: null,
    error: 'connection refused',
    durationMs: 12,
    responseBody: '',
    nextRetryAt: new Date('2026-11-25T10:00:01Z'),
  });

  it('maps every column, snake_case with RFC 3339 times, and the delivery state', () => {
    expect(toWebhookAttemptRecord(attempt, 'pending')).toEqual({
      object: 'webhook_attempt',
      delivery_id: 'a1a1a1a1-0000-4000-8000-000000000001',
      event_id: 'evt-1',
      event_type: 'message.delivered',
      attempt: 1,
      attempted_at: '2026-11-25T10:00:00.000Z',
      response_status: null,
      duration_ms: 12,
      response_body: '',
      error: 'connection refused',
      next_retry_at: '2026-11-25T10:00:01.000Z',
      delivery_state: 'pending',
    });
  });

  it('answers null for the next retry of a settling attempt', () => {
    expect(
      toWebhookAttemptRecord({ ...attempt, nextRetryAt: null }, 'delivered').next_retry_at,
    ).toBeNull();
  });
});
