import {
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
}
