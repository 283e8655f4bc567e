import { type PingReply, PingRequest, WebhooksSubjects } from '@envoi/contracts-webhooks';
import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';

import { SERVICE_NAME } from '../webhooks.config';

/** An example request handler: replace it with the service's own (one controller per entity). */
@Controller()
export class PingController {
  @MessagePattern(WebhooksSubjects.ping.name)
  ping(@Payload() request: PingRequest): PingReply {
    return { service: SERVICE_NAME, message: `hello ${request.name}` };
  }
}
