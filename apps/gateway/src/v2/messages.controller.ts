import type { MessageResponse, PaginatedList } from '@envoi/contracts-core';
import {
  CreateConversationBody,
  CreateMessageBody,
  type CreateMessageResult,
  type MessageRecord,
  MessagesSubjects,
  type MessageSummaryRecord,
} from '@envoi/contracts-messages';
import { RpcClient } from '@envoi/shared-nats';
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';

import { domainRestriction, emailDomain } from '../auth/domain-restriction';
import { RequireScopes, type ScopeRequirement } from '../auth/scopes';
import { assertScopes } from '../auth/scopes.guard';
import { ApiError } from '../errors/api-error';
import { Idempotent } from '../http/edge-route';
import { BodyPipe, Ctx, type RequestContext, UUID_PATTERN } from '../http/request-context';
import { MessageContents, SendPayloads } from '../http/uploads';
import { CursorCodec } from '../pagination/cursor-codec';
import { readPageRequest, toPaginatedList } from '../pagination/list-query';
import { readMessageFilters } from './message-filters';

const LIST = 'messages';

/** Spec 4.2 rule 8: `messages:send:all` or the from-domain's `messages:send:{domain}`. */
const SEND: ScopeRequirement[] = [['messages:send:{domain}']];
const READ: ScopeRequirement[] = [['messages:read:{domain}']];
const CANCEL: ScopeRequirement[] = [['messages:cancel:{domain}']];

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

  @Post()
  @HttpCode(202)
  @Idempotent()
  @RequireScopes(...SEND)
  async create(
    @Ctx() ctx: RequestContext,
    @Body(new BodyPipe(CreateMessageBody)) body: CreateMessageBody,
  ): Promise<CreateMessageResult> {
    assertScopes(ctx.principal, SEND, emailDomain(body.from.email));
    return this.rpc.request(
      MessagesSubjects.createMessage,
      {
        account_id: ctx.principal.account_id,
        credential_id: ctx.principal.key_id,
        api: 'v2',
        ...(await this.payloads.prepare(body, ctx.requestId)),
      },
      { requestId: ctx.requestId },
    );
  }

  @Post('conversation')
  @HttpCode(202)
  @Idempotent()
  @RequireScopes(...SEND)
  async createConversation(
    @Ctx() ctx: RequestContext,
    @Body(new BodyPipe(CreateConversationBody)) body: CreateConversationBody,
  ): Promise<CreateMessageResult> {
    assertScopes(ctx.principal, SEND, emailDomain(body.from.email));
    return this.rpc.request(
      MessagesSubjects.createConversation,
      {
        account_id: ctx.principal.account_id,
        credential_id: ctx.principal.key_id,
        api: 'v2',
        ...(await this.payloads.prepare(body, ctx.requestId)),
      },
      { requestId: ctx.requestId },
    );
  }

  /** A domain-scoped key sees only its domains' messages and may filter only by those senders. */
  @Get()
  @RequireScopes(...READ)
  async list(
    @Ctx() ctx: RequestContext,
    @Query() query: Record<string, string | string[] | undefined>,
  ): Promise<PaginatedList<MessageSummaryRecord>> {
    const accountId = ctx.principal.account_id;
    const domains = domainRestriction(ctx.principal, 'messages:read');
    const filters = readMessageFilters(query);
    if (filters.sender !== undefined && domains !== undefined) {
      assertScopes(ctx.principal, READ, emailDomain(filters.sender));
    }
    const page = readPageRequest(query, this.cursors, accountId, LIST);
    const result = await this.rpc.request(
      MessagesSubjects.listMessages,
      { account_id: accountId, page, filters, ...(domains ? { domains } : {}) },
      { requestId: ctx.requestId },
    );
    return toPaginatedList(result, this.cursors, accountId, LIST);
  }

  @Get(':message_id')
  @RequireScopes(...READ)
  async get(
    @Ctx() ctx: RequestContext,
    @Param('message_id') messageId: string,
  ): Promise<MessageRecord> {
    const domains = domainRestriction(ctx.principal, 'messages:read');
    const record = await this.rpc.request(
      MessagesSubjects.getMessage,
      {
        account_id: ctx.principal.account_id,
        message_id: messageIdParam(messageId),
        ...(domains ? { domains } : {}),
      },
      { requestId: ctx.requestId },
    );
    return this.contents.inline(record);
  }

  /** Spec 4.2 rule 9: `messages:cancel:all` or the cancel scope of the message's sender domain. */
  @Delete(':message_id/cancel')
  @RequireScopes(...CANCEL)
  cancel(
    @Ctx() ctx: RequestContext,
    @Param('message_id') messageId: string,
  ): Promise<MessageResponse> {
    const domains = domainRestriction(ctx.principal, 'messages:cancel');
    return this.rpc.request(
      MessagesSubjects.cancelMessage,
      {
        account_id: ctx.principal.account_id,
        message_id: messageIdParam(messageId),
        ...(domains ? { domains } : {}),
      },
      { requestId: ctx.requestId },
    );
  }
}
