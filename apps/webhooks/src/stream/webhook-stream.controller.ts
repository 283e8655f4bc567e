import {
  AckWebhookStreamRequest,
  type AttachedWebhookStreamRecord,
  AttachWebhookStreamRequest,
  type OpenedWebhookStreamRecord,
  OpenWebhookStreamRequest,
  ReadWebhookStreamRequest,
  type WebhookStreamAckRecord,
  type WebhookStreamEventsRecord,
  WebhookStreamSessionRef,
  WebhookStreamSubjects,
} from '@envoi/contracts-webhooks';
import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';

import { WebhookStreamService } from './webhook-stream.service';

@Controller()
export class WebhookStreamController {
  constructor(private readonly streams: WebhookStreamService) {}

  @MessagePattern(WebhookStreamSubjects.open.name)
  open(@Payload() request: OpenWebhookStreamRequest): Promise<OpenedWebhookStreamRecord> {
    return this.streams.open(request.account_id, request.webhook_id, request.domains);
  }

  @MessagePattern(WebhookStreamSubjects.attach.name)
  attach(@Payload() request: AttachWebhookStreamRequest): Promise<AttachedWebhookStreamRecord> {
    return this.streams.attach(
      request.account_id,
      request.webhook_id,
      request.session_id,
      request.force,
      request.lease_ms,
      request.domains,
    );
  }

  @MessagePattern(WebhookStreamSubjects.read.name)
  read(@Payload() request: ReadWebhookStreamRequest): Promise<WebhookStreamEventsRecord> {
    return this.streams.read(
      request.webhook_id,
      request.session_id,
      request.after_seq,
      request.limit,
    );
  }

  @MessagePattern(WebhookStreamSubjects.ack.name)
  ack(@Payload() request: AckWebhookStreamRequest): Promise<WebhookStreamAckRecord> {
    return this.streams.ack(request.webhook_id, request.session_id, request.seq, request.lease_ms);
  }

  @MessagePattern(WebhookStreamSubjects.detach.name)
  detach(@Payload() request: WebhookStreamSessionRef): Promise<WebhookStreamAckRecord> {
    return this.streams.detach(request.webhook_id, request.session_id);
  }
}
