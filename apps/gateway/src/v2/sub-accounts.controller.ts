import {
  AccountsSubjects,
  CreateSubAccountBody,
  type SubAccountRecord,
  SuspendSubAccountBody,
  UpdateSubAccountBody,
} from '@envoi/contracts-accounts';
import type { MessageResponse, PaginatedList } from '@envoi/contracts-core';
import { RpcClient } from '@envoi/shared-nats';
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';

import { RequireScopes } from '../auth/scope-policy';
import { PARENT_KEY_REQUIRED, TopLevelKeyOnly } from '../auth/top-level-key.guard';
import { Idempotent } from '../http/edge-route';
import { BodyPipe, Ctx, type RequestContext, UuidParam } from '../http/request-context';
import { CursorCodec } from '../pagination/cursor-codec';
import { readPageRequest, toPaginatedList } from '../pagination/list-query';

const LIST = 'sub-accounts';

/**
 * The parent's management of its sub-accounts (spec 3.1, platform notes 1.6). `:sub_account_id`
 * is a parametric segment: Fastify matches a static sibling such as `/sub-accounts/usage` first,
 * whatever the order of registration.
 */
@Controller('v2/accounts/:account_id/sub-accounts')
@TopLevelKeyOnly(PARENT_KEY_REQUIRED)
export class SubAccountsController {
  constructor(
    private readonly rpc: RpcClient,
    private readonly cursors: CursorCodec,
  ) {}

  @Get()
  @RequireScopes(['sub-accounts:read'])
  async list(
    @Ctx() ctx: RequestContext,
    @Query() query: Record<string, string | string[] | undefined>,
  ): Promise<PaginatedList<SubAccountRecord>> {
    const accountId = ctx.principal.account_id;
    const page = readPageRequest(query, this.cursors, accountId, LIST);
    const result = await this.rpc.request(
      AccountsSubjects.listSubAccounts,
      { account_id: accountId, page },
      { requestId: ctx.requestId },
    );
    return toPaginatedList(result, this.cursors, accountId, LIST);
  }

  @Post()
  @HttpCode(201)
  @Idempotent()
  @RequireScopes(['sub-accounts:write'])
  create(
    @Ctx() ctx: RequestContext,
    @Body(new BodyPipe(CreateSubAccountBody)) subAccount: CreateSubAccountBody,
  ): Promise<SubAccountRecord> {
    return this.rpc.request(
      AccountsSubjects.createSubAccount,
      { account_id: ctx.principal.account_id, sub_account: subAccount },
      { requestId: ctx.requestId },
    );
  }

  @Get(':sub_account_id')
  @RequireScopes(['sub-accounts:read'])
  get(
    @Ctx() ctx: RequestContext,
    @Param('sub_account_id', new UuidParam('sub_account_id')) subAccountId: string,
  ): Promise<SubAccountRecord> {
    return this.rpc.request(AccountsSubjects.getSubAccount, this.ref(ctx, subAccountId), {
      requestId: ctx.requestId,
    });
  }

  @Put(':sub_account_id')
  @RequireScopes(['sub-accounts:write'])
  update(
    @Ctx() ctx: RequestContext,
    @Param('sub_account_id', new UuidParam('sub_account_id')) subAccountId: string,
    @Body(new BodyPipe(UpdateSubAccountBody)) changes: UpdateSubAccountBody,
  ): Promise<SubAccountRecord> {
    return this.rpc.request(
      AccountsSubjects.updateSubAccount,
      { ...this.ref(ctx, subAccountId), changes },
      { requestId: ctx.requestId },
    );
  }

  @Delete(':sub_account_id')
  @RequireScopes(['sub-accounts:delete'])
  remove(
    @Ctx() ctx: RequestContext,
    @Param('sub_account_id', new UuidParam('sub_account_id')) subAccountId: string,
  ): Promise<MessageResponse> {
    return this.rpc.request(AccountsSubjects.deleteSubAccount, this.ref(ctx, subAccountId), {
      requestId: ctx.requestId,
    });
  }

  @Post(':sub_account_id/suspend')
  @HttpCode(200)
  @RequireScopes(['sub-accounts:suspend'])
  suspend(
    @Ctx() ctx: RequestContext,
    @Param('sub_account_id', new UuidParam('sub_account_id')) subAccountId: string,
    @Body(new BodyPipe(SuspendSubAccountBody)) suspension: SuspendSubAccountBody,
  ): Promise<SubAccountRecord> {
    return this.rpc.request(
      AccountsSubjects.suspendSubAccount,
      { ...this.ref(ctx, subAccountId), suspension },
      { requestId: ctx.requestId },
    );
  }

  @Post(':sub_account_id/unsuspend')
  @HttpCode(200)
  @RequireScopes(['sub-accounts:suspend'])
  unsuspend(
    @Ctx() ctx: RequestContext,
    @Param('sub_account_id', new UuidParam('sub_account_id')) subAccountId: string,
  ): Promise<SubAccountRecord> {
    return this.rpc.request(AccountsSubjects.unsuspendSubAccount, this.ref(ctx, subAccountId), {
      requestId: ctx.requestId,
    });
  }

  /** The child under the caller's account. */
  private ref(ctx: RequestContext, subAccountId: string) {
    return { account_id: ctx.principal.account_id, sub_account_id: subAccountId };
  }
}
