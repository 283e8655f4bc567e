import type { MessageResponse, Page } from '@envoi/contracts-core';
import {
  type CreatedWebhookRecord,
  CreateWebhookRequest,
  ListWebhooksRequest,
  UpdateWebhookRequest,
  type WebhookRecord,
  WebhookRef,
  WebhooksSubjects,
} from '@envoi/contracts-webhooks';
import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';

import { WebhooksService } from './webhooks.service';

@Controller()
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @MessagePattern(WebhooksSubjects.list.name)
  list(@Payload() request: ListWebhooksRequest): Promise<Page<WebhookRecord>> {
    return this.webhooks.list(request.account_id, request.filters, request.domains, request.page);
  }

  @MessagePattern(WebhooksSubjects.create.name)
  create(@Payload() request: CreateWebhookRequest): Promise<CreatedWebhookRecord> {
    return this.webhooks.create(request.account_id, request.body, request.domains);
  }

  @MessagePattern(WebhooksSubjects.get.name)
  get(@Payload() request: WebhookRef): Promise<WebhookRecord> {
    return this.webhooks.get(request.account_id, request.webhook_id, request.domains);
  }

  @MessagePattern(WebhooksSubjects.update.name)
  update(@Payload() request: UpdateWebhookRequest): Promise<WebhookRecord> {
    return this.webhooks.update(
      request.account_id,
      request.webhook_id,
      request.changes,
      request.domains,
    );
  }

  @MessagePattern(WebhooksSubjects.delete.name)
  delete(@Payload() request: WebhookRef): Promise<MessageResponse> {
    return this.webhooks.delete(request.account_id, request.webhook_id, request.domains);
  }
}
