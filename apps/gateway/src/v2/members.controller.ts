import { AccountsSubjects, AddMemberBody, type MemberRecord } from '@envoi/contracts-accounts';
import type { MessageResponse, PlainList } from '@envoi/contracts-core';
import { RpcClient } from '@envoi/shared-nats';
import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';

import { RequireScopes } from '../auth/scope-policy';
import { Idempotent } from '../http/edge-route';
import { BodyPipe, Ctx, type RequestContext, UuidParam } from '../http/request-context';

@Controller('v2/accounts/:account_id/members')
export class MembersController {
  constructor(private readonly rpc: RpcClient) {}

  @Get()
  @RequireScopes(['accounts:members:read'])
  list(@Ctx() ctx: RequestContext): Promise<PlainList<MemberRecord>> {
    return this.rpc.request(
      AccountsSubjects.listMembers,
      { account_id: ctx.principal.account_id },
      { requestId: ctx.requestId },
    );
  }

  @Post()
  @HttpCode(201)
  @Idempotent()
  @RequireScopes(['accounts:members:add'])
  add(
    @Ctx() ctx: RequestContext,
    @Body(new BodyPipe(AddMemberBody)) member: AddMemberBody,
  ): Promise<MemberRecord> {
    return this.rpc.request(
      AccountsSubjects.addMember,
      { account_id: ctx.principal.account_id, member },
      { requestId: ctx.requestId },
    );
  }

  @Delete(':user_id')
  @RequireScopes(['accounts:members:remove'])
  remove(
    @Ctx() ctx: RequestContext,
    @Param('user_id', new UuidParam('user_id')) userId: string,
  ): Promise<MessageResponse> {
    return this.rpc.request(
      AccountsSubjects.removeMember,
      { account_id: ctx.principal.account_id, user_id: userId },
      { requestId: ctx.requestId },
    );
  }
}
