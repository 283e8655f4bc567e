import {
  AccountsSubjects,
  type ApiKeyRecord,
  ApiKeyRef,
  ApiKeysUsedEvent,
  CreateApiKeyRequest,
  type CreatedApiKeyRecord,
  ListApiKeysRequest,
  UpdateApiKeyRequest,
  type VerifiedApiKey,
  VerifyApiKeyRequest,
} from '@envoi/contracts-accounts';
import type { MessageResponse, Page } from '@envoi/contracts-core';
import { Controller } from '@nestjs/common';
import { EventPattern, MessagePattern, Payload } from '@nestjs/microservices';

import { ApiKeysService } from './api-keys.service';

@Controller()
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  @MessagePattern(AccountsSubjects.listApiKeys.name)
  list(@Payload() request: ListApiKeysRequest): Promise<Page<ApiKeyRecord>> {
    return this.apiKeys.list(request.account_id, request.page);
  }

  @MessagePattern(AccountsSubjects.createApiKey.name)
  create(@Payload() request: CreateApiKeyRequest): Promise<CreatedApiKeyRecord> {
    return this.apiKeys.create(request.account_id, request.key);
  }

  @MessagePattern(AccountsSubjects.getApiKey.name)
  get(@Payload() request: ApiKeyRef): Promise<ApiKeyRecord> {
    return this.apiKeys.get(request.account_id, request.key_id);
  }

  @MessagePattern(AccountsSubjects.updateApiKey.name)
  update(@Payload() request: UpdateApiKeyRequest): Promise<ApiKeyRecord> {
    return this.apiKeys.update(request);
  }

  @MessagePattern(AccountsSubjects.deleteApiKey.name)
  delete(@Payload() request: ApiKeyRef): Promise<MessageResponse> {
    return this.apiKeys.delete(request.account_id, request.key_id);
  }

  @MessagePattern(AccountsSubjects.verifyApiKey.name)
  verify(@Payload() request: VerifyApiKeyRequest): Promise<VerifiedApiKey> {
    return this.apiKeys.verify(request.secret_hash);
  }

  @EventPattern(AccountsSubjects.apiKeysUsed.name)
  used(@Payload() event: ApiKeysUsedEvent): Promise<void> {
    return this.apiKeys.recordUses(event.uses);
  }
}
