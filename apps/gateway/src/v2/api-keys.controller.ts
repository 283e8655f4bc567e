import {
  AccountsSubjects,
  type ApiKeyRecord,
  CreateApiKeyBody,
  type CreatedApiKeyRecord,
  UpdateApiKeyBody,
} from '@envoi/contracts-accounts';
import type { MessageResponse, PaginatedList } from '@envoi/contracts-core';
import { RpcClient } from '@envoi/shared-nats';
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';

import { assertMayGrantScopes } from '../auth/scope-delegation';
import { RequireScopes } from '../auth/scope-policy';
import { SUB_ACCOUNT_KEY_REFUSED, TopLevelKeyOnly } from '../auth/top-level-key.guard';
import { Idempotent } from '../http/edge-route';
import { BodyPipe, Ctx, type RequestContext, UuidParam } from '../http/request-context';
import { CursorCodec } from '../pagination/cursor-codec';
import { readPageRequest, toPaginatedList } from '../pagination/list-query';

const LIST = 'api-keys';

@Controller('v2/accounts/:account_id/api-keys')
@TopLevelKeyOnly(SUB_ACCOUNT_KEY_REFUSED)
export class ApiKeysController {
  constructor(
    private readonly rpc: RpcClient,
    private readonly cursors: CursorCodec,
  ) {}

  @Get()
  @RequireScopes(['api-keys:read'])
  async list(
    @Ctx() ctx: RequestContext,
    @Query() query: Record<string, string | string[] | undefined>,
  ): Promise<PaginatedList<ApiKeyRecord>> {
    const accountId = ctx.principal.account_id;
    const page = readPageRequest(query, this.cursors, accountId, LIST);
    const result = await this.rpc.request(
      AccountsSubjects.listApiKeys,
      { account_id: accountId, page },
      { requestId: ctx.requestId },
    );
    return toPaginatedList(result, this.cursors, accountId, LIST);
  }

  @Post()
  @HttpCode(201)
  @Idempotent('secret')
  @RequireScopes(['api-keys:write'])
  create(
    @Ctx() ctx: RequestContext,
    @Body(new BodyPipe(CreateApiKeyBody)) key: CreateApiKeyBody,
  ): Promise<CreatedApiKeyRecord> {
    assertMayGrantScopes(ctx.principal, key.scopes);
    return this.rpc.request(
      AccountsSubjects.createApiKey,
      { account_id: ctx.principal.account_id, key },
      { requestId: ctx.requestId },
    );
  }

  @Get(':key_id')
  @RequireScopes(['api-keys:read'])
  get(
    @Ctx() ctx: RequestContext,
    @Param('key_id', new UuidParam('key_id')) keyId: string,
  ): Promise<ApiKeyRecord> {
    return this.rpc.request(
      AccountsSubjects.getApiKey,
      { account_id: ctx.principal.account_id, key_id: keyId },
      { requestId: ctx.requestId },
    );
  }

  @Put(':key_id')
  @RequireScopes(['api-keys:write'])
  update(
    @Ctx() ctx: RequestContext,
    @Param('key_id', new UuidParam('key_id')) keyId: string,
    @Body(new BodyPipe(UpdateApiKeyBody)) changes: UpdateApiKeyBody,
  ): Promise<ApiKeyRecord> {
    if (changes.scopes) assertMayGrantScopes(ctx.principal, changes.scopes);
    return this.rpc.request(
      AccountsSubjects.updateApiKey,
      {
        account_id: ctx.principal.account_id,
        key_id: keyId,
        changes,
        caller: { key_id: ctx.principal.key_id, ip: ctx.clientIp },
      },
      { requestId: ctx.requestId },
    );
  }

  @Delete(':key_id')
  @RequireScopes(['api-keys:delete'])
  remove(
    @Ctx() ctx: RequestContext,
    @Param('key_id', new UuidParam('key_id')) keyId: string,
  ): Promise<MessageResponse> {
    return this.rpc.request(
      AccountsSubjects.deleteApiKey,
      { account_id: ctx.principal.account_id, key_id: keyId },
      { requestId: ctx.requestId },
    );
  }
}
