import { type AccountRecord, AccountsSubjects, UpdateAccountBody } from '@envoi/contracts-accounts';
import { RpcClient } from '@envoi/shared-nats';
import { Body, Controller, Get, Put } from '@nestjs/common';

import { RequireScopes } from '../auth/scope-policy';
import { BodyPipe, Ctx, type RequestContext } from '../http/request-context';

@Controller('v2/accounts/:account_id')
export class AccountsController {
  constructor(private readonly rpc: RpcClient) {}

  @Get()
  @RequireScopes(['accounts:read'])
  get(@Ctx() ctx: RequestContext): Promise<AccountRecord> {
    return this.rpc.request(
      AccountsSubjects.getAccount,
      { account_id: ctx.principal.account_id },
      { requestId: ctx.requestId },
    );
  }

  @Put()
  @RequireScopes(['accounts:write'])
  update(
    @Ctx() ctx: RequestContext,
    @Body(new BodyPipe(UpdateAccountBody)) changes: UpdateAccountBody,
  ): Promise<AccountRecord> {
    return this.rpc.request(
      AccountsSubjects.updateAccount,
      { account_id: ctx.principal.account_id, changes },
      { requestId: ctx.requestId },
    );
  }
}
