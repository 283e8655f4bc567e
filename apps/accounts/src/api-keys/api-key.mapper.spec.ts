import { ApiKeyEntity } from './api-key.entity';
import { toApiKeyRecord, toCreatedApiKeyRecord } from './api-key.mapper';
import { ApiKeyScopeEntity } from './api-key-scope.entity';

function keyEntity(overrides: Partial<ApiKeyEntity> = {}): ApiKeyEntity {
  return Object.assign(new ApiKeyEntity(), {
    id: '6a0b9a38-0000-4000-8000-000000000001',
    seq: '42',
    accountId: '6a0b9a38-0000-4000-8000-0000000000aa',
    createdAt: new Date('2026-01-02T03:04:05.678Z'),
    updatedAt: new Date('2026-01-03T03:04:05.678Z'),
    lastUsedAt: null,
    label: 'CI',
    publicKey: 'envoi-pk-abcdefghijkl',
    secretHash: 'f'.repeat(64),
    ipAllowList: ['10.0.0.0/8'],
    ...overrides,
  });
}

const scope = Object.assign(new ApiKeyScopeEntity(), {
  id: '6a0b9a38-0000-4000-8000-0000000000bb',
  apiKeyId: '6a0b9a38-0000-4000-8000-000000000001',
  createdAt: new Date('2026-01-02T03:04:05.678Z'),
  updatedAt: new Date('2026-01-02T03:04:05.678Z'),
  scope: 'messages:send:{example.com}',
  position: 0,
  domain: 'example.com',
  domainId: '6a0b9a38-0000-4000-8000-0000000000cc',
});

describe('toApiKeyRecord', () => {
  it('maps to the public record, without internal columns', () => {
    expect(toApiKeyRecord(keyEntity(), [scope])).toEqual({
      object: 'api_key',
      id: '6a0b9a38-0000-4000-8000-000000000001',
      created_at: '2026-01-02T03:04:05.678Z',
      updated_at: '2026-01-03T03:04:05.678Z',
      last_used_at: null,
      account_id: '6a0b9a38-0000-4000-8000-0000000000aa',
      label: 'CI',
      public_key: 'envoi-pk-abcdefghijkl',
      scopes: [
        {
          id: '6a0b9a38-0000-4000-8000-0000000000bb',
          created_at: '2026-01-02T03:04:05.678Z',
          updated_at: '2026-01-02T03:04:05.678Z',
          api_key_id: '6a0b9a38-0000-4000-8000-000000000001',
          scope: 'messages:send:{example.com}',
          domain_id: '6a0b9a38-0000-4000-8000-0000000000cc',
        },
      ],
      ip_allow_list: ['10.0.0.0/8'],
    });
  });

  it('formats last_used_at when set', () => {
    const record = toApiKeyRecord(
      keyEntity({ lastUsedAt: new Date('2026-02-01T00:00:00.000Z') }),
      [],
    );

    expect(record.last_used_at).toBe('2026-02-01T00:00:00.000Z');
  });

  it('adds the secret only to the create response', () => {
    const record = toApiKeyRecord(keyEntity(), []);

    expect(toCreatedApiKeyRecord(record, 'envoi-sk-secret')).toEqual({
      ...record,
      secret_key: 'envoi-sk-secret',
    });
    expect(record).not.toHaveProperty('secret_key');
  });
});
