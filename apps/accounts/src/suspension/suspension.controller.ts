import {
  AccountRef,
  AccountsSubjects,
  type AccountStatusesRecord,
  AccountStatusesRequest,
  type AccountStatusRecord,
  SuspendAccountRequest,
} from '@envoi/contracts-accounts';
import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';

import { SuspensionService } from './suspension.service';

@Controller()
export class SuspensionController {
  constructor(private readonly suspension: SuspensionService) {}

  @MessagePattern(AccountsSubjects.suspendAccount.name)
  suspend(@Payload() request: SuspendAccountRequest): Promise<AccountStatusRecord> {
    return this.suspension.suspend(request.account_id, request.reason);
  }

  @MessagePattern(AccountsSubjects.unsuspendAccount.name)
  unsuspend(@Payload() request: AccountRef): Promise<AccountStatusRecord> {
    return this.suspension.unsuspend(request.account_id);
  }

  @MessagePattern(AccountsSubjects.accountStatuses.name)
  statuses(@Payload() request: AccountStatusesRequest): Promise<AccountStatusesRecord> {
    return this.suspension.statuses(request.account_ids);
  }
}
