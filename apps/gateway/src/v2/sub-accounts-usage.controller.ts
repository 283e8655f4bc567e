import { AccountsSubjects, type SubAccountsUsageRecord } from '@envoi/contracts-accounts';
import { RpcClient } from '@envoi/shared-nats';
import { Controller, Get } from '@nestjs/common';

import { RequireScopes } from '../auth/scope-policy';
import { PARENT_KEY_REQUIRED, TopLevelKeyOnly } from '../auth/top-level-key.guard';
import { Ctx, type RequestContext } from '../http/request-context';

/**
 * The parent's usage report for the current billing period (spec 2.6). `usage` is a static
 * segment: Fastify matches it before the sibling `/sub-accounts/:sub_account_id`, and this
 * controller is also registered first.
 */
@Controller('v2/accounts/:account_id/sub-accounts/usage')
@TopLevelKeyOnly(PARENT_KEY_REQUIRED)
export class SubAccountsUsageController {
  constructor(private readonly rpc: RpcClient) {}

  @Get()
  @RequireScopes(['sub-accounts:usage'])
  get(@Ctx() ctx: RequestContext): Promise<SubAccountsUsageRecord> {
    return this.rpc.request(
      AccountsSubjects.getSubAccountsUsage,
      { account_id: ctx.principal.account_id },
      { requestId: ctx.requestId },
    );
  }
}
