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

/** Cursors of one child's keys are valid only for that child's list. */
function listName(subAccountId: string): string {
  return `sub-account-api-keys:${subAccountId}`;
}

/** A parent's management of its sub-accounts' keys (platform notes 1.6); `account_id` is the parent. */
@Controller('v2/accounts/:account_id/sub-accounts/:sub_account_id/api-keys')
@TopLevelKeyOnly(SUB_ACCOUNT_KEY_REFUSED)
export class SubAccountApiKeysController {
  constructor(
    private readonly rpc: RpcClient,
    private readonly cursors: CursorCodec,
  ) {}

  @Get()
  @RequireScopes(['sub-account-api-keys:read'])
  async list(
    @Ctx() ctx: RequestContext,
    @Param('sub_account_id', new UuidParam('sub_account_id')) subAccountId: string,
    @Query() query: Record<string, string | string[] | undefined>,
  ): Promise<PaginatedList<ApiKeyRecord>> {
    const accountId = ctx.principal.account_id;
    const page = readPageRequest(query, this.cursors, accountId, listName(subAccountId));
    const result = await this.rpc.request(
      AccountsSubjects.listSubAccountApiKeys,
      { account_id: accountId, sub_account_id: subAccountId, page },
      { requestId: ctx.requestId },
    );
    return toPaginatedList(result, this.cursors, accountId, listName(subAccountId));
  }

  @Post()
  @HttpCode(201)
  @Idempotent('secret')
  @RequireScopes(['sub-account-api-keys:write'])
  create(
    @Ctx() ctx: RequestContext,
    @Param('sub_account_id', new UuidParam('sub_account_id')) subAccountId: string,
    @Body(new BodyPipe(CreateApiKeyBody)) key: CreateApiKeyBody,
  ): Promise<CreatedApiKeyRecord> {
    assertMayGrantScopes(ctx.principal, key.scopes);
    return this.rpc.request(
      AccountsSubjects.createSubAccountApiKey,
      { account_id: ctx.principal.account_id, sub_account_id: subAccountId, key },
      { requestId: ctx.requestId },
    );
  }

  @Get(':key_id')
  @RequireScopes(['sub-account-api-keys:read'])
  get(
    @Ctx() ctx: RequestContext,
    @Param('sub_account_id', new UuidParam('sub_account_id')) subAccountId: string,
    @Param('key_id', new UuidParam('key_id')) keyId: string,
  ): Promise<ApiKeyRecord> {
    return this.rpc.request(
      AccountsSubjects.getSubAccountApiKey,
      { account_id: ctx.principal.account_id, sub_account_id: subAccountId, key_id: keyId },
      { requestId: ctx.requestId },
    );
  }

  @Put(':key_id')
  @RequireScopes(['sub-account-api-keys:write'])
  update(
    @Ctx() ctx: RequestContext,
    @Param('sub_account_id', new UuidParam('sub_account_id')) subAccountId: string,
    @Param('key_id', new UuidParam('key_id')) keyId: string,
    @Body(new BodyPipe(UpdateApiKeyBody)) changes: UpdateApiKeyBody,
  ): Promise<ApiKeyRecord> {
    if (changes.scopes) assertMayGrantScopes(ctx.principal, changes.scopes);
    return this.rpc.request(
      AccountsSubjects.updateSubAccountApiKey,
      {
        account_id: ctx.principal.account_id,
        sub_account_id: subAccountId,
        key_id: keyId,
        changes,
      },
      { requestId: ctx.requestId },
    );
  }

  @Delete(':key_id')
  @RequireScopes(['sub-account-api-keys:delete'])
  remove(
    @Ctx() ctx: RequestContext,
    @Param('sub_account_id', new UuidParam('sub_account_id')) subAccountId: string,
    @Param('key_id', new UuidParam('key_id')) keyId: string,
  ): Promise<MessageResponse> {
    return this.rpc.request(
      AccountsSubjects.deleteSubAccountApiKey,
      { account_id: ctx.principal.account_id, sub_account_id: subAccountId, key_id: keyId },
      { requestId: ctx.requestId },
    );
  }
}
