import type { WebhookAttemptRecord, WebhookDeliveryRecord } from '@envoi/contracts-webhooks';

import type { WebhookAttemptEntity } from '../dispatch/webhook-attempt.entity';
import type { DeliveryState, WebhookDeliveryEntity } from '../dispatch/webhook-delivery.entity';

export function toWebhookDeliveryRecord(delivery: WebhookDeliveryEntity): WebhookDeliveryRecord {
  return {
    object: 'webhook_delivery',
    id: delivery.id,
    webhook_id: delivery.webhookId,
    event_id: delivery.eventId,
    event_type: delivery.eventType,
    state: delivery.state,
    attempts: delivery.attempts,
    next_attempt_at: delivery.state === 'pending' ? delivery.nextAttemptAt.toISOString() : null,
    created_at: delivery.createdAt.toISOString(),
    updated_at: delivery.updatedAt.toISOString(),
  };
}

export function toWebhookAttemptRecord(
  attempt: WebhookAttemptEntity,
  deliveryState: DeliveryState,
): WebhookAttemptRecord {
  return {
    object: 'webhook_attempt',
    delivery_id: attempt.deliveryId,
    event_id: attempt.eventId,
    event_type: attempt.eventType,
    attempt: attempt.attempt,
    attempted_at: attempt.attemptedAt.toISOString(),
    response_status: attempt.responseStatus,
    duration_ms: attempt.durationMs,
    response_body: attempt.responseBody,
    error: attempt.error,
    next_retry_at: attempt.nextRetryAt?.toISOString() ?? null,
    delivery_state: deliveryState,
  };
}
