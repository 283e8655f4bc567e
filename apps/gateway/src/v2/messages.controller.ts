import type { MessageResponse, PaginatedList } from '@envoi/contracts-core';
import {
  CreateConversationBody,
  CreateMessageBody,
  type CreateMessageResult,
  type MessageRecord,
  MessagesSubjects,
  type MessageSummaryRecord,
  type SendIdempotency,
} from '@envoi/contracts-messages';
import { emailDomain } from '@envoi/shared-edge';
import { RpcClient } from '@envoi/shared-nats';
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';

import {
  DOMAIN_FROM_RESOURCE,
  domainFromBody,
  DomainScope,
  RequireScopes,
  ResourceDomains,
} from '../auth/scope-policy';
import { ApiError, AUTH_MESSAGES } from '../errors/api-error';
import { Idempotent } from '../http/edge-route';
import { BodyPipe, Ctx, type RequestContext, UUID_PATTERN } from '../http/request-context';
import { MessageContents, SendPayloads } from '../http/uploads';
import { ClaimedIdempotency } from '../idempotency/claimed-idempotency';
import { CursorCodec } from '../pagination/cursor-codec';
import { readPageRequest, toPaginatedList } from '../pagination/list-query';
import { readMessageFilters } from './message-filters';

const LIST = 'messages';

/** `<uuid@domain>` or the bare uuid (spec 4, cancel). */
const MESSAGE_ID = /^<[0-9a-f-]{36}@[a-z0-9.-]{1,253}>$/i;

function messageIdParam(raw: string): string {
  const value = raw.trim();
  if (UUID_PATTERN.test(value)) return value.toLowerCase();
  if (MESSAGE_ID.test(value) && UUID_PATTERN.test(value.slice(1, 37))) return value;
  throw new ApiError(400, 'invalid message_id: expected <uuid@domain> or the bare uuid');
}

@Controller('v2/accounts/:account_id/messages')
export class MessagesController {
  constructor(
    private readonly rpc: RpcClient,
    private readonly cursors: CursorCodec,
    private readonly payloads: SendPayloads,
    private readonly contents: MessageContents,
  ) {}

  /** Spec 4.2 rule 8: `messages:send:all` or the from-domain's `messages:send:{domain}`. */
  @Post()
  @HttpCode(202)
  @Idempotent()
  @RequireScopes(['messages:send:{domain}'], {
    domainFrom: domainFromBody(CreateMessageBody, (body) => emailDomain(body.from.email)),
  })
  async create(
    @Ctx() ctx: RequestContext,
    @Body(new BodyPipe(CreateMessageBody)) body: CreateMessageBody,
    @ClaimedIdempotency() idempotency: SendIdempotency | undefined,
  ): Promise<CreateMessageResult> {
    return this.rpc.request(
      MessagesSubjects.createMessage,
      {
        account_id: ctx.principal.account_id,
        credential_id: ctx.principal.key_id,
        api: 'v2',
        ...(idempotency ? { idempotency } : {}),
        ...(await this.payloads.prepare(body, ctx.requestId)),
      },
      { requestId: ctx.requestId },
    );
  }

  @Post('conversation')
  @HttpCode(202)
  @Idempotent()
  @RequireScopes(['messages:send:{domain}'], {
    domainFrom: domainFromBody(CreateConversationBody, (body) => emailDomain(body.from.email)),
  })
  async createConversation(
    @Ctx() ctx: RequestContext,
    @Body(new BodyPipe(CreateConversationBody)) body: CreateConversationBody,
    @ClaimedIdempotency() idempotency: SendIdempotency | undefined,
  ): Promise<CreateMessageResult> {
    return this.rpc.request(
      MessagesSubjects.createConversation,
      {
        account_id: ctx.principal.account_id,
        credential_id: ctx.principal.key_id,
        api: 'v2',
        ...(idempotency ? { idempotency } : {}),
        ...(await this.payloads.prepare(body, ctx.requestId)),
      },
      { requestId: ctx.requestId },
    );
  }

  /** A domain-scoped key sees only its domains' messages and may filter only by those senders. */
  @Get()
  @RequireScopes(['messages:read:{domain}'], { domainFrom: DOMAIN_FROM_RESOURCE })
  async list(
    @Ctx() ctx: RequestContext,
    @ResourceDomains() scope: DomainScope,
    @Query() query: Record<string, string | string[] | undefined>,
  ): Promise<PaginatedList<MessageSummaryRecord>> {
    const accountId = ctx.principal.account_id;
    const filters = readMessageFilters(query);
    if (filters.sender !== undefined && !scope.allows(emailDomain(filters.sender))) {
      throw new ApiError(403, AUTH_MESSAGES.insufficientScope);
    }
    const page = readPageRequest(query, this.cursors, accountId, LIST);
    const result = await this.rpc.request(
      MessagesSubjects.listMessages,
      { account_id: accountId, page, filters, ...scope.restriction() },
      { requestId: ctx.requestId },
    );
    return toPaginatedList(result, this.cursors, accountId, LIST);
  }

  @Get(':message_id')
  @RequireScopes(['messages:read:{domain}'], { domainFrom: DOMAIN_FROM_RESOURCE })
  async get(
    @Ctx() ctx: RequestContext,
    @ResourceDomains() scope: DomainScope,
    @Param('message_id') messageId: string,
  ): Promise<MessageRecord> {
    const record = await this.rpc.request(
      MessagesSubjects.getMessage,
      {
        account_id: ctx.principal.account_id,
        message_id: messageIdParam(messageId),
        ...scope.restriction(),
      },
      { requestId: ctx.requestId },
    );
    return this.contents.inline(record);
  }

  /** Spec 4.2 rule 9: `messages:cancel:all` or the cancel scope of the message's sender domain. */
  @Delete(':message_id/cancel')
  @RequireScopes(['messages:cancel:{domain}'], { domainFrom: DOMAIN_FROM_RESOURCE })
  cancel(
    @Ctx() ctx: RequestContext,
    @ResourceDomains() scope: DomainScope,
    @Param('message_id') messageId: string,
  ): Promise<MessageResponse> {
    return this.rpc.request(
      MessagesSubjects.cancelMessage,
      {
        account_id: ctx.principal.account_id,
        message_id: messageIdParam(messageId),
        ...scope.restriction(),
      },
      { requestId: ctx.requestId },
    );
  }
}
