import type { Page } from '@envoi/contracts-core';
import {
  ListWebhookAttemptsRequest,
  type TriggeredWebhookEventsRecord,
  TriggerWebhookRequest,
  type WebhookAttemptRecord,
  WebhookDeliveriesSubjects,
  type WebhookDeliveryRecord,
  WebhookDeliveryRef,
} from '@envoi/contracts-webhooks';
import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';

import { WebhookDeliveriesService } from './webhook-deliveries.service';

@Controller()
export class WebhookDeliveriesController {
  constructor(private readonly deliveries: WebhookDeliveriesService) {}

  @MessagePattern(WebhookDeliveriesSubjects.listAttempts.name)
  listAttempts(
    @Payload() request: ListWebhookAttemptsRequest,
  ): Promise<Page<WebhookAttemptRecord>> {
    return this.deliveries.listAttempts(
      request.account_id,
      request.webhook_id,
      request.domains,
      request.page,
    );
  }

  @MessagePattern(WebhookDeliveriesSubjects.retry.name)
  retry(@Payload() request: WebhookDeliveryRef): Promise<WebhookDeliveryRecord> {
    return this.deliveries.retry(
      request.account_id,
      request.webhook_id,
      request.delivery_id,
      request.domains,
    );
  }

  @MessagePattern(WebhookDeliveriesSubjects.trigger.name)
  trigger(@Payload() request: TriggerWebhookRequest): Promise<TriggeredWebhookEventsRecord> {
    return this.deliveries.trigger(
      request.account_id,
      request.webhook_id,
      request.body.events,
      request.domains,
    );
  }
}
