import {
  AccountsSubjects,
  type CreatedSmtpCredentialRecord,
  CreateSmtpCredentialRequest,
  ListSmtpCredentialsRequest,
  type SmtpCredentialRecord,
  SmtpCredentialRef,
  type VerifiedSmtpLogin,
  VerifySmtpLoginRequest,
} from '@envoi/contracts-accounts';
import type { MessageResponse, Page } from '@envoi/contracts-core';
import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';

import { SmtpCredentialsService } from './smtp-credentials.service';
import { SmtpLoginService } from './smtp-login.service';

@Controller()
export class SmtpCredentialsController {
  constructor(
    private readonly credentials: SmtpCredentialsService,
    private readonly logins: SmtpLoginService,
  ) {}

  @MessagePattern(AccountsSubjects.listSmtpCredentials.name)
  list(@Payload() request: ListSmtpCredentialsRequest): Promise<Page<SmtpCredentialRecord>> {
    return this.credentials.list(request.account_id, request.domains, request.page);
  }

  @MessagePattern(AccountsSubjects.createSmtpCredential.name)
  create(@Payload() request: CreateSmtpCredentialRequest): Promise<CreatedSmtpCredentialRecord> {
    return this.credentials.create(request.account_id, request.credential);
  }

  @MessagePattern(AccountsSubjects.getSmtpCredential.name)
  get(@Payload() request: SmtpCredentialRef): Promise<SmtpCredentialRecord> {
    return this.credentials.get(request.account_id, request.credential_id, request.domains);
  }

  @MessagePattern(AccountsSubjects.deleteSmtpCredential.name)
  delete(@Payload() request: SmtpCredentialRef): Promise<MessageResponse> {
    return this.credentials.delete(request.account_id, request.credential_id, request.domains);
  }

  @MessagePattern(AccountsSubjects.verifySmtpLogin.name)
  verify(@Payload() request: VerifySmtpLoginRequest): Promise<VerifiedSmtpLogin> {
    return this.logins.verify(request);
  }
}
