import {
  type AccountRecord,
  AccountRef,
  type AccountSendingRecord,
  AccountsSubjects,
  CreateAccountRequest,
  type CreatedAccount,
  UpdateAccountRequest,
} from '@envoi/contracts-accounts';
import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';

import { AccountsService } from './accounts.service';

@Controller()
export class AccountsController {
  constructor(private readonly accounts: AccountsService) {}

  @MessagePattern(AccountsSubjects.createAccount.name)
  create(@Payload() request: CreateAccountRequest): Promise<CreatedAccount> {
    return this.accounts.create(request);
  }

  @MessagePattern(AccountsSubjects.getAccount.name)
  get(@Payload() request: AccountRef): Promise<AccountRecord> {
    return this.accounts.get(request.account_id);
  }

  @MessagePattern(AccountsSubjects.getSendingSettings.name)
  sendingSettings(@Payload() request: AccountRef): Promise<AccountSendingRecord> {
    return this.accounts.sendingSettings(request.account_id);
  }

  @MessagePattern(AccountsSubjects.updateAccount.name)
  update(@Payload() request: UpdateAccountRequest): Promise<AccountRecord> {
    return this.accounts.update(request.account_id, request.changes);
  }
}
