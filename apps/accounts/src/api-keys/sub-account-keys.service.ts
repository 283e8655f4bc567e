import type {
  ApiKeyRecord,
  CreateApiKeyBody,
  CreatedApiKeyRecord,
  UpdateApiKeyBody,
} from '@envoi/contracts-accounts';
import type { MessageResponse, Page, PageRequest } from '@envoi/contracts-core';
import { CodedError, CommonErrorCode } from '@envoi/contracts-core';
import { Injectable } from '@nestjs/common';

import { AccountsRepository } from '../accounts/accounts.repository';
import { ApiKeysService } from './api-keys.service';
import { assertScopesForSubAccount } from './sub-account-keys.rules';

/** The path of a sub-account's keys: the parent named in the URL and its child. */
export interface SubAccountPath {
  parentId: string;
  subAccountId: string;
}

function subAccountNotFound(): CodedError {
  return new CodedError(CommonErrorCode.NotFound, 'sub account not found');
}

/**
 * A parent's management of its sub-accounts' keys (platform notes 1.6): the keys are the child's
 * own, managed by ApiKeysService once the child is known to be a live child of the parent. Updates
 * carry no caller, so there is no self-lockout guard (spec 5.7).
 */
@Injectable()
export class SubAccountKeysService {
  constructor(
    private readonly accounts: AccountsRepository,
    private readonly apiKeys: ApiKeysService,
  ) {}

  async list(path: SubAccountPath, page: PageRequest): Promise<Page<ApiKeyRecord>> {
    return this.apiKeys.list(await this.requireChild(path), page);
  }

  async create(path: SubAccountPath, body: CreateApiKeyBody): Promise<CreatedApiKeyRecord> {
    const childId = await this.requireChild(path);
    assertScopesForSubAccount(body.scopes);
    return this.apiKeys.create(childId, body);
  }

  async get(path: SubAccountPath, keyId: string): Promise<ApiKeyRecord> {
    return this.apiKeys.get(await this.requireChild(path), keyId);
  }

  async update(
    path: SubAccountPath,
    keyId: string,
    changes: UpdateApiKeyBody,
  ): Promise<ApiKeyRecord> {
    const childId = await this.requireChild(path);
    assertScopesForSubAccount(changes.scopes ?? []);
    return this.apiKeys.update({ account_id: childId, key_id: keyId, changes });
  }

  async delete(path: SubAccountPath, keyId: string): Promise<MessageResponse> {
    return this.apiKeys.delete(await this.requireChild(path), keyId);
  }

  /** The child's id when it is a child of the parent and not deleted; otherwise not found. */
  private async requireChild(path: SubAccountPath): Promise<string> {
    const child = await this.accounts.findById(path.subAccountId);
    if (!child || child.parentAccountId !== path.parentId || child.deletedAt !== null) {
      throw subAccountNotFound();
    }
    return child.id;
  }
}
