import {
  type AccountCreditRecord,
  AccountRef,
  AccountsSubjects,
  type SubAccountsUsageRecord,
} from '@envoi/contracts-accounts';
import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';

import { UsageService } from './usage.service';

@Controller()
export class UsageController {
  constructor(private readonly usage: UsageService) {}

  @MessagePattern(AccountsSubjects.getSubAccountsUsage.name)
  report(@Payload() request: AccountRef): Promise<SubAccountsUsageRecord> {
    return this.usage.report(request.account_id);
  }

  @MessagePattern(AccountsSubjects.getAccountCredit.name)
  credit(@Payload() request: AccountRef): Promise<AccountCreditRecord> {
    return this.usage.credit(request.account_id);
  }
}
