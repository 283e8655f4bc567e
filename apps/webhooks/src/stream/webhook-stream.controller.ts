import {
  type OpenedWebhookStreamRecord,
  OpenWebhookStreamRequest,
  WebhookStreamSubjects,
} from '@envoi/contracts-webhooks';
import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';

import { WebhookStreamService } from './webhook-stream.service';

/** Opening a webhook stream; the listener requests are served by the listener-streams controller. */
@Controller()
export class WebhookStreamController {
  constructor(private readonly streams: WebhookStreamService) {}

  @MessagePattern(WebhookStreamSubjects.open.name)
  open(@Payload() request: OpenWebhookStreamRequest): Promise<OpenedWebhookStreamRecord> {
    return this.streams.open(request.account_id, request.webhook_id, request.domains);
  }
}
