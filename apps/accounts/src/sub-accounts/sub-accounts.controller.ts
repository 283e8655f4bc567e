import {
  AccountsSubjects,
  CreateSubAccountRequest,
  ListSubAccountsRequest,
  type SubAccountRecord,
  SubAccountRef,
  SuspendSubAccountRequest,
  UpdateSubAccountRequest,
} from '@envoi/contracts-accounts';
import type { MessageResponse, Page } from '@envoi/contracts-core';
import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';

import { SubAccountsService } from './sub-accounts.service';

@Controller()
export class SubAccountsController {
  constructor(private readonly subAccounts: SubAccountsService) {}

  @MessagePattern(AccountsSubjects.listSubAccounts.name)
  list(@Payload() request: ListSubAccountsRequest): Promise<Page<SubAccountRecord>> {
    return this.subAccounts.list(request.account_id, request.page);
  }

  @MessagePattern(AccountsSubjects.createSubAccount.name)
  create(@Payload() request: CreateSubAccountRequest): Promise<SubAccountRecord> {
    return this.subAccounts.create(request.account_id, request.sub_account);
  }

  @MessagePattern(AccountsSubjects.getSubAccount.name)
  get(@Payload() request: SubAccountRef): Promise<SubAccountRecord> {
    return this.subAccounts.get(request.account_id, request.sub_account_id);
  }

  @MessagePattern(AccountsSubjects.updateSubAccount.name)
  update(@Payload() request: UpdateSubAccountRequest): Promise<SubAccountRecord> {
    return this.subAccounts.update(request.account_id, request.sub_account_id, request.changes);
  }

  @MessagePattern(AccountsSubjects.deleteSubAccount.name)
  delete(@Payload() request: SubAccountRef): Promise<MessageResponse> {
    return this.subAccounts.delete(request.account_id, request.sub_account_id);
  }

  @MessagePattern(AccountsSubjects.suspendSubAccount.name)
  suspend(@Payload() request: SuspendSubAccountRequest): Promise<SubAccountRecord> {
    return this.subAccounts.suspend(
      request.account_id,
      request.sub_account_id,
      request.suspension.reason,
    );
  }

  @MessagePattern(AccountsSubjects.unsuspendSubAccount.name)
  unsuspend(@Payload() request: SubAccountRef): Promise<SubAccountRecord> {
    return this.subAccounts.unsuspend(request.account_id, request.sub_account_id);
  }
}
