import { AccountsErrorCode } from '@envoi/contracts-accounts';
import { CommonErrorCode } from '@envoi/contracts-core';

import type { AccountEntity } from '../accounts/account.entity';
import type { AccountsRepository } from '../accounts/accounts.repository';
import type { ApiKeysService } from './api-keys.service';
import { isParentOnlyScope } from './sub-account-keys.rules';
import { SubAccountKeysService } from './sub-account-keys.service';

const PARENT_ID = '6a0b9a38-0000-4000-8000-0000000000aa';
const OTHER_PARENT_ID = '6a0b9a38-0000-4000-8000-0000000000bb';
const CHILD_ID = '6a0b9a38-0000-4000-8000-0000000000cc';
const KEY_ID = '6a0b9a38-0000-4000-8000-0000000000dd';
const PATH = { parentId: PARENT_ID, subAccountId: CHILD_ID };

function child(fields: Partial<AccountEntity> = {}): AccountEntity {
  return { id: CHILD_ID, parentAccountId: PARENT_ID, deletedAt: null, ...fields } as AccountEntity;
}

describe('SubAccountKeysService', () => {
  let findById: jest.Mock<Promise<AccountEntity | null>, unknown[]>;
  let apiKeys: Record<'list' | 'create' | 'get' | 'update' | 'delete', jest.Mock>;
  let service: SubAccountKeysService;

  beforeEach(() => {
    findById = jest.fn<Promise<AccountEntity | null>, unknown[]>().mockResolvedValue(child());
    apiKeys = {
      list: jest.fn().mockResolvedValue('listed'),
      create: jest.fn().mockResolvedValue('created'),
      get: jest.fn().mockResolvedValue('got'),
      update: jest.fn().mockResolvedValue('updated'),
      delete: jest.fn().mockResolvedValue('deleted'),
    };
    service = new SubAccountKeysService(
      { findById } as unknown as AccountsRepository,
      apiKeys as unknown as ApiKeysService,
    );
  });

  it("manages the child's own keys", async () => {
    const body = { label: 'k', scopes: ['messages:send:all'] };
    await expect(service.list(PATH, { limit: 10 })).resolves.toBe('listed');
    await expect(service.create(PATH, body)).resolves.toBe('created');
    await expect(service.get(PATH, KEY_ID)).resolves.toBe('got');
    await expect(service.delete(PATH, KEY_ID)).resolves.toBe('deleted');
    expect(apiKeys.list).toHaveBeenCalledWith(CHILD_ID, { limit: 10 });
    expect(apiKeys.create).toHaveBeenCalledWith(CHILD_ID, body);
    expect(apiKeys.get).toHaveBeenCalledWith(CHILD_ID, KEY_ID);
    expect(apiKeys.delete).toHaveBeenCalledWith(CHILD_ID, KEY_ID);
  });

  it('updates without a caller, so without the self-lockout guard', async () => {
    const changes = { ip_allow_list: ['192.0.2.1'] };
    await expect(service.update(PATH, KEY_ID, changes)).resolves.toBe('updated');
    expect(apiKeys.update).toHaveBeenCalledWith({
      account_id: CHILD_ID,
      key_id: KEY_ID,
      changes,
    });
  });

  it.each([
    ['unknown', null],
    ['a child of another parent', child({ parentAccountId: OTHER_PARENT_ID })],
    ['a top-level account', child({ parentAccountId: null })],
    ['deleted', child({ deletedAt: new Date() })],
  ])('answers not found for a sub-account that is %s, touching no key', async (_, account) => {
    findById.mockResolvedValue(account);
    const operations = [
      service.list(PATH, { limit: 10 }),
      service.create(PATH, { label: 'k', scopes: ['accounts:read'] }),
      service.get(PATH, KEY_ID),
      service.update(PATH, KEY_ID, { label: 'x' }),
      service.delete(PATH, KEY_ID),
    ];
    for (const operation of operations) {
      await expect(operation).rejects.toMatchObject({
        code: CommonErrorCode.NotFound,
        message: 'sub account not found',
      });
    }
    for (const method of Object.values(apiKeys)) expect(method).not.toHaveBeenCalled();
  });

  it.each(['sub-accounts:read', 'sub-account-api-keys:write'])(
    'refuses to give %s to a child key (400), on create and update',
    async (scope) => {
      const refused = {
        code: AccountsErrorCode.InvalidScope,
        message: `scope ${scope} cannot be given to a sub account's API key`,
      };
      await expect(
        service.create(PATH, { label: 'k', scopes: ['accounts:read', scope] }),
      ).rejects.toMatchObject(refused);
      await expect(service.update(PATH, KEY_ID, { scopes: [scope] })).rejects.toMatchObject(
        refused,
      );
      expect(apiKeys.create).not.toHaveBeenCalled();
      expect(apiKeys.update).not.toHaveBeenCalled();
    },
  );
});

describe('isParentOnlyScope', () => {
  it.each([
    ['sub-accounts:usage', true],
    ['sub-account-api-keys:delete', true],
    ['api-keys:write', false],
    ['accounts:read', false],
    ['messages:send:{sub-accounts.example}', false],
  ])('%s → %s', (scope, expected) => {
    expect(isParentOnlyScope(scope)).toBe(expected);
  });
});
