import { createHash } from 'node:crypto';

import {
  AccountsErrorCode,
  AccountsSubjects,
  type ApiKeyRecord,
  type CreateApiKeyBody,
  type CreatedApiKeyRecord,
  type UpdateApiKeyRequest,
} from '@envoi/contracts-accounts';
import { CommonErrorCode } from '@envoi/contracts-core';

import {
  type AccountsTestApp,
  anyString,
  stringMatching,
  UNKNOWN_ID,
  withoutSecret,
} from '../accounts-test-app';

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export function apiKeysSuite(getApp: () => AccountsTestApp): void {
  describe('accounts service: api keys', () => {
    let app: AccountsTestApp;

    beforeAll(() => {
      app = getApp();
    });

    async function newAccountId(): Promise<string> {
      return (await app.createAccount()).account.id;
    }

    function createKey(
      accountId: string,
      key: Partial<CreateApiKeyBody> = {},
    ): Promise<CreatedApiKeyRecord> {
      return app.rpc.request(AccountsSubjects.createApiKey, {
        account_id: accountId,
        key: { label: 'Test key', scopes: ['messages:send:all'], ...key },
      });
    }

    function updateKey(
      key: ApiKeyRecord,
      changes: UpdateApiKeyRequest['changes'],
      caller?: UpdateApiKeyRequest['caller'],
    ): Promise<ApiKeyRecord> {
      return app.rpc.request(AccountsSubjects.updateApiKey, {
        account_id: key.account_id,
        key_id: key.id,
        changes,
        ...(caller ? { caller } : {}),
      });
    }

    function getKey(key: ApiKeyRecord): Promise<ApiKeyRecord> {
      return app.rpc.request(AccountsSubjects.getApiKey, {
        account_id: key.account_id,
        key_id: key.id,
      });
    }

    function scopesOf(key: ApiKeyRecord): string[] {
      return key.scopes.map((scope) => scope.scope);
    }

    async function keyCount(accountId: string): Promise<number> {
      const [row] = await app.dataSource.query<Array<{ count: string }>>(
        'SELECT count(*) AS count FROM accounts.api_keys WHERE account_id = $1',
        [accountId],
      );
      return Number(row?.count);
    }

    describe('createApiKey', () => {
      it('returns the record with a one-time secret in the documented format', async () => {
        const accountId = await newAccountId();

        const key = await createKey(accountId, {
          label: 'Production',
          scopes: ['messages:send:all', 'domains:read'],
        });

        expect(key).toEqual({
          object: 'api_key',
          id: anyString,
          created_at: anyString,
          updated_at: key.created_at,
          last_used_at: null,
          account_id: accountId,
          label: 'Production',
          public_key: anyString,
          scopes: [
            {
              id: anyString,
              created_at: key.created_at,
              updated_at: key.created_at,
              api_key_id: key.id,
              scope: 'messages:send:all',
              domain_id: null,
            },
            expect.objectContaining({ api_key_id: key.id, scope: 'domains:read', domain_id: null }),
          ],
          ip_allow_list: [],
          secret_key: stringMatching(/^envoi-sk-[A-Za-z0-9]{64}$/),
        });
        expect(key.public_key).toBe(`envoi-pk-${key.secret_key.slice('envoi-sk-'.length, 21)}`);
      });

      it('issues a different secret every time', async () => {
        const accountId = await newAccountId();

        const [first, second] = await Promise.all([createKey(accountId), createKey(accountId)]);

        expect(first.secret_key).not.toBe(second.secret_key);
        expect(first.public_key).not.toBe(second.public_key);
      });

      it('stores only the SHA-256 of the secret', async () => {
        const accountId = await newAccountId();
        const key = await createKey(accountId);
        const randomPart = key.secret_key.slice('envoi-sk-'.length);

        const rows = await app.dataSource.query<Array<{ row: string; secret_hash: string }>>(
          `SELECT row_to_json(k)::text AS row, k.secret_hash FROM accounts.api_keys k WHERE k.id = $1`,
          [key.id],
        );
        const scopeRows = await app.dataSource.query<Array<{ row: string }>>(
          `SELECT row_to_json(s)::text AS row FROM accounts.api_key_scopes s WHERE s.api_key_id = $1`,
          [key.id],
        );

        expect(rows).toHaveLength(1);
        expect(rows[0]?.secret_hash).toBe(sha256(key.secret_key));
        for (const { row } of [...rows, ...scopeRows]) {
          expect(row).not.toContain(key.secret_key);
          expect(row).not.toContain(randomPart);
        }
      });

      it('does not echo the secret anywhere else', async () => {
        const accountId = await newAccountId();
        const key = await createKey(accountId);

        const fetched = await getKey(key);
        const listed = await app.rpc.request(AccountsSubjects.listApiKeys, {
          account_id: accountId,
          page: { limit: 100 },
        });

        expect(fetched).toEqual(withoutSecret(key));
        expect(JSON.stringify(listed)).not.toContain(key.secret_key);
      });

      it('stores scopes in canonical form, keeping the domain of a domain scope', async () => {
        const accountId = await newAccountId();
        const com = await app.createDomain(accountId, 'example.com');
        const org = await app.createDomain(accountId, 'example.org');

        const key = await createKey(accountId, {
          scopes: ['messages:send:{Example.COM.}', 'webhooks:read:{example.org}'],
        });

        expect(scopesOf(key)).toEqual([
          'messages:send:{example.com}',
          'webhooks:read:{example.org}',
        ]);
        expect(key.scopes.map((scope) => scope.domain_id)).toEqual([com.id, org.id]);
        const rows = await app.dataSource.query<Array<{ scope: string; domain: string | null }>>(
          'SELECT scope, domain FROM accounts.api_key_scopes WHERE api_key_id = $1 ORDER BY position',
          [key.id],
        );
        expect(rows).toEqual([
          { scope: 'messages:send:{example.com}', domain: 'example.com' },
          { scope: 'webhooks:read:{example.org}', domain: 'example.org' },
        ]);
      });

      it('drops a domain scope already covered by the same action’s :all', async () => {
        const accountId = await newAccountId();
        await app.createDomain(accountId, 'example.com');

        const key = await createKey(accountId, {
          scopes: [
            'messages:send:{example.com}',
            'messages:read:{example.com}',
            'messages:send:all',
            'accounts:read',
          ],
        });

        expect(scopesOf(key)).toEqual([
          'messages:read:{example.com}',
          'messages:send:all',
          'accounts:read',
        ]);
      });

      it.each([
        ['messages:fly:all'],
        ['*'],
        ['accounts:read:all'],
        ['messages:send:example.com'],
        ['messages:send:{not a domain}'],
        ['messages:send:{localhost}'],
      ])('rejects the invalid scope %s and creates nothing', async (scope) => {
        const accountId = await newAccountId();

        await expect(
          createKey(accountId, { scopes: ['domains:read', scope] }),
        ).rejects.toMatchObject({
          code: AccountsErrorCode.InvalidScope,
          message: `invalid scope: ${scope}`,
        });
        expect(await keyCount(accountId)).toBe(1);
      });

      it.each([
        [['domains:read', 'domains:read'], 'domains:read'],
        [
          ['messages:send:{example.com}', 'messages:send:{EXAMPLE.com}'],
          'messages:send:{EXAMPLE.com}',
        ],
      ])('rejects duplicate scopes %j', async (scopes, duplicate) => {
        const accountId = await newAccountId();

        await expect(createKey(accountId, { scopes })).rejects.toMatchObject({
          code: AccountsErrorCode.InvalidScope,
          message: `duplicate scope: ${duplicate}`,
        });
      });

      it('canonicalises the IP allow list', async () => {
        const accountId = await newAccountId();

        const key = await createKey(accountId, {
          ip_allow_list: [
            '10.0.0.5/8',
            '2001:db8::1',
            '::ffff:1.2.3.4',
            '10.200.0.1/8',
            ' 192.0.2.7 ',
            '2001:DB8:0:0::1/128',
            '2001:db8:abcd::1/48',
          ],
        });

        expect(key.ip_allow_list).toEqual([
          '10.0.0.0/8',
          '2001:db8::1/128',
          '1.2.3.4/32',
          '192.0.2.7/32',
          '2001:db8:abcd::/48',
        ]);
        await expect(getKey(key)).resolves.toMatchObject({ ip_allow_list: key.ip_allow_list });
      });

      it.each([['0.0.0.0/0'], ['::/0'], ['not-an-ip'], ['10.0.0.0/33'], ['2001:db8::/129']])(
        'rejects the allow-list entry %s',
        async (entry) => {
          const accountId = await newAccountId();

          await expect(
            createKey(accountId, { ip_allow_list: ['192.0.2.1', entry] }),
          ).rejects.toMatchObject({ code: AccountsErrorCode.InvalidIpAllowList });
          expect(await keyCount(accountId)).toBe(1);
        },
      );

      it('accepts 100 distinct entries, duplicates not counted, and rejects 101', async () => {
        const accountId = await newAccountId();
        const hundred = Array.from({ length: 100 }, (_, i) => `198.51.${i}.1`);

        const key = await createKey(accountId, {
          ip_allow_list: [...hundred, ...hundred.map((ip) => `${ip}/32`)],
        });
        expect(key.ip_allow_list).toHaveLength(100);

        await expect(
          createKey(accountId, { ip_allow_list: [...hundred, '203.0.113.1'] }),
        ).rejects.toMatchObject({
          code: AccountsErrorCode.InvalidIpAllowList,
          message: stringMatching(/at most 100/),
        });
      });

      it('answers account_not_found for an unknown account', async () => {
        await expect(createKey(UNKNOWN_ID)).rejects.toMatchObject({
          code: AccountsErrorCode.AccountNotFound,
        });
      });

      it('validates the payload', async () => {
        const accountId = await newAccountId();

        await expect(createKey(accountId, { scopes: [] })).rejects.toMatchObject({
          code: CommonErrorCode.ValidationFailed,
        });
        await expect(createKey(accountId, { label: '' })).rejects.toMatchObject({
          code: CommonErrorCode.ValidationFailed,
        });
      });
    });

    describe('listApiKeys', () => {
      it('pages newest first and walks forwards and backwards by position', async () => {
        const { account, api_key: fullAccess } = await app.createAccount();
        const keys: ApiKeyRecord[] = [];
        for (let i = 1; i <= 5; i++) keys.push(await createKey(account.id, { label: `k${i}` }));
        const list = (page: { limit: number; after?: string; before?: string }) =>
          app.rpc.request(AccountsSubjects.listApiKeys, { account_id: account.id, page });
        const labels = (page: { data: ApiKeyRecord[] }) => page.data.map((key) => key.label);

        const first = await list({ limit: 2 });
        expect(labels(first)).toEqual(['k5', 'k4']);
        expect(first.has_more).toBe(true);
        expect(first.previous_position).toBeUndefined();
        expect(first.next_position).toEqual(stringMatching(/^[0-9]+$/));

        const second = await list({ limit: 2, after: first.next_position });
        expect(labels(second)).toEqual(['k3', 'k2']);
        expect(second.has_more).toBe(true);
        expect(second.previous_position).toBeDefined();

        const third = await list({ limit: 2, after: second.next_position });
        expect(labels(third)).toEqual(['k1', fullAccess.label]);
        expect(third.has_more).toBe(false);
        expect(third.next_position).toBeUndefined();

        const back = await list({ limit: 2, before: third.previous_position });
        expect(labels(back)).toEqual(['k3', 'k2']);
        expect(back.has_more).toBe(true);
        expect(back.previous_position).toBeDefined();

        const start = await list({ limit: 2, before: back.previous_position });
        expect(labels(start)).toEqual(['k5', 'k4']);
        expect(start.previous_position).toBeUndefined();

        expect(first.data[0]).toEqual(await getKey(keys[4]));
      });

      it('lists only the account’s own keys', async () => {
        const mine = await app.createAccount();
        const theirs = await app.createAccount();
        await createKey(theirs.account.id);

        const page = await app.rpc.request(AccountsSubjects.listApiKeys, {
          account_id: mine.account.id,
          page: { limit: 100 },
        });

        expect(page.data.map((key) => key.id)).toEqual([mine.api_key.id]);
        expect(page.has_more).toBe(false);
      });

      it('answers account_not_found for an unknown account', async () => {
        await expect(
          app.rpc.request(AccountsSubjects.listApiKeys, {
            account_id: UNKNOWN_ID,
            page: { limit: 10 },
          }),
        ).rejects.toMatchObject({ code: AccountsErrorCode.AccountNotFound });
      });

      it('rejects a limit out of range', async () => {
        const accountId = await newAccountId();

        await expect(
          app.rpc.request(AccountsSubjects.listApiKeys, {
            account_id: accountId,
            page: { limit: 101 },
          }),
        ).rejects.toMatchObject({ code: CommonErrorCode.ValidationFailed });
      });
    });

    describe('another account’s key is not found', () => {
      it('for get, update and delete, and stays untouched', async () => {
        const mine = await newAccountId();
        const theirKey = await createKey(await newAccountId(), { label: 'Theirs' });
        const ref = { account_id: mine, key_id: theirKey.id };

        await expect(app.rpc.request(AccountsSubjects.getApiKey, ref)).rejects.toMatchObject({
          code: AccountsErrorCode.ApiKeyNotFound,
          message: 'api key not found',
        });
        await expect(
          app.rpc.request(AccountsSubjects.updateApiKey, {
            ...ref,
            changes: { label: 'Mine now' },
          }),
        ).rejects.toMatchObject({ code: AccountsErrorCode.ApiKeyNotFound });
        await expect(app.rpc.request(AccountsSubjects.deleteApiKey, ref)).rejects.toMatchObject({
          code: AccountsErrorCode.ApiKeyNotFound,
        });

        const unchanged = withoutSecret(theirKey);
        await expect(getKey(theirKey)).resolves.toEqual(unchanged);
      });

      it('and so is an unknown key', async () => {
        const accountId = await newAccountId();

        await expect(
          app.rpc.request(AccountsSubjects.getApiKey, {
            account_id: accountId,
            key_id: UNKNOWN_ID,
          }),
        ).rejects.toMatchObject({ code: AccountsErrorCode.ApiKeyNotFound });
      });
    });

    describe('updateApiKey', () => {
      it('changes the label and bumps updated_at', async () => {
        const key = await createKey(await newAccountId(), { label: 'Old' });

        const updated = await updateKey(key, { label: 'New', scopes: null, ip_allow_list: null });

        expect(updated.label).toBe('New');
        expect(Date.parse(updated.updated_at)).toBeGreaterThan(Date.parse(key.updated_at));
        expect(updated.created_at).toBe(key.created_at);
        expect(updated.scopes).toEqual(key.scopes);
        await expect(getKey(key)).resolves.toEqual(updated);
      });

      it('replaces the scopes, keeping the records of the scopes that stay', async () => {
        const accountId = await newAccountId();
        await app.createDomain(accountId, 'example.com');
        const key = await createKey(accountId, {
          scopes: ['domains:read', 'messages:send:all'],
        });
        const kept = key.scopes.find((scope) => scope.scope === 'messages:send:all');

        const updated = await updateKey(key, {
          scopes: ['messages:send:all', 'routes:read:{Example.com}', 'suppressions:read'],
        });

        expect(scopesOf(updated)).toEqual([
          'messages:send:all',
          'routes:read:{example.com}',
          'suppressions:read',
        ]);
        expect(updated.scopes[0]).toEqual(kept);
        expect(Date.parse(updated.updated_at)).toBeGreaterThan(Date.parse(key.updated_at));
      });

      it('sets and clears the allow list', async () => {
        const key = await createKey(await newAccountId());

        const restricted = await updateKey(key, { ip_allow_list: ['192.0.2.9/24', '2001:db8::9'] });
        expect(restricted.ip_allow_list).toEqual(['192.0.2.0/24', '2001:db8::9/128']);

        const cleared = await updateKey(key, { ip_allow_list: [] });
        expect(cleared.ip_allow_list).toEqual([]);
      });

      it.each([
        ['nothing', {}],
        ['only nulls', { label: null, scopes: null, ip_allow_list: null }],
        ['the same label', { label: 'Same' }],
        ['the same scopes in another order', { scopes: ['domains:read', 'messages:send:all'] }],
        [
          'the same scopes before canonicalisation',
          { scopes: ['messages:send:all', 'domains:read', 'messages:send:{a.com}'] },
        ],
        ['an allow list with the same canonical form', { ip_allow_list: ['10.9.9.9/8'] }],
        [
          'every field unchanged',
          {
            label: 'Same',
            scopes: ['messages:send:all', 'domains:read'],
            ip_allow_list: ['10.0.0.0/8'],
          },
        ],
      ] as Array<[string, UpdateApiKeyRequest['changes']]>)(
        'answers nothing_to_update for %s',
        async (_case, changes) => {
          const key = await createKey(await newAccountId(), {
            label: 'Same',
            scopes: ['messages:send:all', 'domains:read'],
            ip_allow_list: ['10.0.0.0/8'],
          });

          await expect(updateKey(key, changes)).rejects.toMatchObject({
            code: AccountsErrorCode.NothingToUpdate,
            message: 'at least one field must be provided and differ from the current value',
          });
          await expect(getKey(key)).resolves.toMatchObject({ updated_at: key.updated_at });
        },
      );

      it('applies the changed fields when others are provided unchanged', async () => {
        const key = await createKey(await newAccountId(), { label: 'Same' });

        const updated = await updateKey(key, { label: 'Same', ip_allow_list: ['192.0.2.1'] });

        expect(updated).toMatchObject({ label: 'Same', ip_allow_list: ['192.0.2.1/32'] });
      });

      it('rejects an invalid scope or allow list and saves nothing', async () => {
        const key = await createKey(await newAccountId(), { label: 'Keep' });

        await expect(
          updateKey(key, { label: 'Changed', scopes: ['nope:read'] }),
        ).rejects.toMatchObject({ code: AccountsErrorCode.InvalidScope });
        await expect(
          updateKey(key, { label: 'Changed', ip_allow_list: ['0.0.0.0/0'] }),
        ).rejects.toMatchObject({ code: AccountsErrorCode.InvalidIpAllowList });

        const unchanged = withoutSecret(key);
        await expect(getKey(key)).resolves.toEqual(unchanged);
      });

      describe('self-lockout guard', () => {
        it.each([
          ['IPv4', '203.0.113.9', ['198.51.100.0/24', '203.0.114.0/24']],
          ['IPv6', '2001:db8::5', ['2001:db8:1::/48']],
          ['IPv6 caller, IPv4 list', '2001:db8::5', ['203.0.113.0/24']],
        ])(
          'rejects a key excluding its own caller (%s) and saves nothing',
          async (_family, ip, list) => {
            const key = await createKey(await newAccountId(), { label: 'Self' });

            await expect(
              updateKey(key, { label: 'Locked out', ip_allow_list: list }, { key_id: key.id, ip }),
            ).rejects.toMatchObject({
              code: AccountsErrorCode.SelfLockout,
              message: 'the new ip_allow_list would exclude your current IP address',
            });

            const unchanged = withoutSecret(key);
            await expect(getKey(key)).resolves.toEqual(unchanged);
          },
        );

        it.each([
          ['IPv4', '203.0.113.9', ['203.0.113.0/24']],
          ['IPv6', '2001:db8::5', ['2001:db8::/32']],
          ['IPv4-mapped IPv6 caller', '::ffff:203.0.113.9', ['203.0.113.9']],
          ['empty list', '203.0.113.9', []],
        ])('lets a key keep its own caller (%s)', async (_case, ip, list) => {
          const key = await createKey(await newAccountId(), { ip_allow_list: ['192.0.2.0/24'] });

          const updated = await updateKey(key, { ip_allow_list: list }, { key_id: key.id, ip });

          expect(updated.ip_allow_list).toHaveLength(list.length);
        });

        it('does not apply when another key of the account makes the change', async () => {
          const { account, api_key: admin } = await app.createAccount();
          const key = await createKey(account.id);

          const updated = await updateKey(
            key,
            { ip_allow_list: ['198.51.100.0/24'] },
            { key_id: admin.id, ip: '203.0.113.9' },
          );

          expect(updated.ip_allow_list).toEqual(['198.51.100.0/24']);
        });

        it('does not apply to a parent managing a key (no caller)', async () => {
          const key = await createKey(await newAccountId());

          const updated = await updateKey(key, { ip_allow_list: ['198.51.100.0/24'] });

          expect(updated.ip_allow_list).toEqual(['198.51.100.0/24']);
        });
      });
    });

    describe('deleteApiKey', () => {
      it('deletes the key and its scopes', async () => {
        const key = await createKey(await newAccountId(), { label: 'Doomed' });

        const result = await app.rpc.request(AccountsSubjects.deleteApiKey, {
          account_id: key.account_id,
          key_id: key.id,
        });

        expect(result).toEqual({ message: `api key ${key.id} (Doomed) deleted successfully` });
        await expect(getKey(key)).rejects.toMatchObject({ code: AccountsErrorCode.ApiKeyNotFound });
        const scopes = await app.dataSource.query<unknown[]>(
          'SELECT 1 FROM accounts.api_key_scopes WHERE api_key_id = $1',
          [key.id],
        );
        expect(scopes).toHaveLength(0);
        await expect(
          app.rpc.request(AccountsSubjects.deleteApiKey, {
            account_id: key.account_id,
            key_id: key.id,
          }),
        ).rejects.toMatchObject({ code: AccountsErrorCode.ApiKeyNotFound });
      });
    });
  });
}
