import {
  AccountsSubjects,
  type ApiKeyRecord,
  type CreatedApiKeyRecord,
  CreateSubAccountApiKeyRequest,
  ListSubAccountApiKeysRequest,
  SubAccountApiKeyRef,
  type SubAccountRef,
  UpdateSubAccountApiKeyRequest,
} from '@envoi/contracts-accounts';
import type { MessageResponse, Page } from '@envoi/contracts-core';
import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';

import { SubAccountKeysService, type SubAccountPath } from './sub-account-keys.service';

function pathOf(request: SubAccountRef): SubAccountPath {
  return { parentId: request.account_id, subAccountId: request.sub_account_id };
}

@Controller()
export class SubAccountKeysController {
  constructor(private readonly keys: SubAccountKeysService) {}

  @MessagePattern(AccountsSubjects.listSubAccountApiKeys.name)
  list(@Payload() request: ListSubAccountApiKeysRequest): Promise<Page<ApiKeyRecord>> {
    return this.keys.list(pathOf(request), request.page);
  }

  @MessagePattern(AccountsSubjects.createSubAccountApiKey.name)
  create(@Payload() request: CreateSubAccountApiKeyRequest): Promise<CreatedApiKeyRecord> {
    return this.keys.create(pathOf(request), request.key);
  }

  @MessagePattern(AccountsSubjects.getSubAccountApiKey.name)
  get(@Payload() request: SubAccountApiKeyRef): Promise<ApiKeyRecord> {
    return this.keys.get(pathOf(request), request.key_id);
  }

  @MessagePattern(AccountsSubjects.updateSubAccountApiKey.name)
  update(@Payload() request: UpdateSubAccountApiKeyRequest): Promise<ApiKeyRecord> {
    return this.keys.update(pathOf(request), request.key_id, request.changes);
  }

  @MessagePattern(AccountsSubjects.deleteSubAccountApiKey.name)
  delete(@Payload() request: SubAccountApiKeyRef): Promise<MessageResponse> {
    return this.keys.delete(pathOf(request), request.key_id);
  }
}
