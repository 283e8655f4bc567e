import type { MessageResponse, Page } from '@envoi/contracts-core';
import {
  CreateConversationRequest,
  CreateMessageRequest,
  type CreateMessageResult,
  type DeliveryView,
  DeliveryViewRequest,
  type DeliveryViews,
  DeliveryViewsRequest,
  type DeliveryViewsV2,
  ListMessagesRequest,
  type MessageRecord,
  MessageRef,
  MessagesSubjects,
  type MessageSummaryRecord,
} from '@envoi/contracts-messages';
import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';

import { AcceptService } from './accept.service';
import { DeliveryViewService } from './delivery-view.service';
import { MessagesService } from './messages.service';
import { validRequest } from './valid-request';

@Controller()
export class MessagesController {
  constructor(
    private readonly accept: AcceptService,
    private readonly messages: MessagesService,
    private readonly deliveryViews: DeliveryViewService,
  ) {}

  /**
   * Its payload typed `object` so the transport's pipe leaves it alone: validatePayload checks the
   * body's recipients by hand first (see CreateMessageRequest), which the pipe cannot.
   */
  @MessagePattern(MessagesSubjects.createMessage.name)
  createMessage(@Payload() payload: object): Promise<CreateMessageResult> {
    return this.accept.createMessage(validRequest(CreateMessageRequest, payload));
  }

  @MessagePattern(MessagesSubjects.createConversation.name)
  createConversation(@Payload() request: CreateConversationRequest): Promise<CreateMessageResult> {
    return this.accept.createConversation(request);
  }

  @MessagePattern(MessagesSubjects.listMessages.name)
  list(@Payload() request: ListMessagesRequest): Promise<Page<MessageSummaryRecord>> {
    return this.messages.list(request);
  }

  @MessagePattern(MessagesSubjects.getMessage.name)
  get(@Payload() request: MessageRef): Promise<MessageRecord> {
    return this.messages.get(request);
  }

  @MessagePattern(MessagesSubjects.cancelMessage.name)
  cancel(@Payload() request: MessageRef): Promise<MessageResponse> {
    return this.messages.cancel(request);
  }

  /** Internal, for the delivery workers. */
  @MessagePattern(MessagesSubjects.deliveryView.name)
  deliveryView(@Payload() request: DeliveryViewRequest): Promise<DeliveryView> {
    return this.deliveryViews.view(request);
  }

  /** Internal, for the delivery workers: the views of a job's messages at once. */
  @MessagePattern(MessagesSubjects.deliveryViews.name)
  deliveryViewsOf(@Payload() request: DeliveryViewsRequest): Promise<DeliveryViews> {
    return this.deliveryViews.views(request);
  }

  /** Internal, for the delivery workers: the views and their sends' sources; workers compose. */
  @MessagePattern(MessagesSubjects.deliveryViewsV2.name)
  deliveryViewsWithSources(@Payload() request: DeliveryViewsRequest): Promise<DeliveryViewsV2> {
    return this.deliveryViews.viewsWithSources(request);
  }
}
