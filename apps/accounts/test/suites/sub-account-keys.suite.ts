import {
  AccountsErrorCode,
  AccountsSubjects,
  type ApiKeyChangedEvent,
  type CreateApiKeyBody,
  type CreatedApiKeyRecord,
} from '@envoi/contracts-accounts';
import { CommonErrorCode } from '@envoi/contracts-core';
import { pollUntil } from '@envoi/shared-testing';

import { type AccountsTestApp, EventRecorder, UNKNOWN_ID } from '../accounts-test-app';

const NOT_FOUND = { code: CommonErrorCode.NotFound, message: 'sub account not found' };

export function subAccountKeysSuite(getApp: () => AccountsTestApp): void {
  describe('accounts service: sub-account api keys', () => {
    let app: AccountsTestApp;

    beforeAll(() => {
      app = getApp();
    });

    /** A parent and one child, provisioned over the bus as the admin command does. */
    async function family(): Promise<{ parentId: string; childId: string }> {
      const parentId = (await app.createAccount()).account.id;
      const child = await app.createAccount({ parent_account_id: parentId });
      return { parentId, childId: child.account.id };
    }

    function createChildKey(
      parentId: string,
      childId: string,
      key: Partial<CreateApiKeyBody> = {},
    ): Promise<CreatedApiKeyRecord> {
      return app.rpc.request(AccountsSubjects.createSubAccountApiKey, {
        account_id: parentId,
        sub_account_id: childId,
        key: { label: 'child key', scopes: ['messages:send:all'], ...key },
      });
    }

    it("creates, lists, reads, updates and deletes the child's keys", async () => {
      const { parentId, childId } = await family();
      const created = await createChildKey(parentId, childId, { ip_allow_list: ['192.0.2.7'] });
      expect(created).toMatchObject({ account_id: childId, ip_allow_list: ['192.0.2.7/32'] });
      expect(created.secret_key).toMatch(/^envoi-sk-[A-Za-z0-9]{64}$/);
      const ref = { account_id: parentId, sub_account_id: childId, key_id: created.id };

      const listed = await app.rpc.request(AccountsSubjects.listSubAccountApiKeys, {
        account_id: parentId,
        sub_account_id: childId,
        page: { limit: 100 },
      });
      expect(listed.data.map((key) => key.id)).toContain(created.id);
      expect(listed.data.every((key) => key.account_id === childId)).toBe(true);
      expect(JSON.stringify(listed)).not.toContain(created.secret_key);

      const read = await app.rpc.request(AccountsSubjects.getSubAccountApiKey, ref);
      expect(read).toMatchObject({ id: created.id, account_id: childId, label: 'child key' });

      // No self-lockout guard: a parent may move the child key's allow list anywhere.
      const updated = await app.rpc.request(AccountsSubjects.updateSubAccountApiKey, {
        ...ref,
        changes: { label: 'renamed', ip_allow_list: ['198.51.100.0/24'] },
      });
      expect(updated).toMatchObject({ label: 'renamed', ip_allow_list: ['198.51.100.0/24'] });

      await expect(app.rpc.request(AccountsSubjects.deleteSubAccountApiKey, ref)).resolves.toEqual({
        message: `api key ${created.id} (renamed) deleted successfully`,
      });
      await expect(
        app.rpc.request(AccountsSubjects.getSubAccountApiKey, ref),
      ).rejects.toMatchObject({ code: AccountsErrorCode.ApiKeyNotFound });
    });

    it('answers not found for a child of another parent, an unknown child or a deleted one', async () => {
      const { parentId, childId } = await family();
      const stranger = (await app.createAccount()).account.id;
      const key = await createChildKey(parentId, childId);
      const deleted = await family();
      await app.dataSource.query('UPDATE accounts.accounts SET deleted_at = now() WHERE id = $1', [
        deleted.childId,
      ]);

      for (const [parent, child] of [
        [stranger, childId],
        [parentId, UNKNOWN_ID],
        [parentId, parentId],
        [deleted.parentId, deleted.childId],
      ] as const) {
        await expect(createChildKey(parent, child)).rejects.toMatchObject(NOT_FOUND);
        await expect(
          app.rpc.request(AccountsSubjects.listSubAccountApiKeys, {
            account_id: parent,
            sub_account_id: child,
            page: { limit: 10 },
          }),
        ).rejects.toMatchObject(NOT_FOUND);
        const ref = { account_id: parent, sub_account_id: child, key_id: key.id };
        await expect(
          app.rpc.request(AccountsSubjects.getSubAccountApiKey, ref),
        ).rejects.toMatchObject(NOT_FOUND);
        await expect(
          app.rpc.request(AccountsSubjects.updateSubAccountApiKey, {
            ...ref,
            changes: { label: 'hijacked' },
          }),
        ).rejects.toMatchObject(NOT_FOUND);
        await expect(
          app.rpc.request(AccountsSubjects.deleteSubAccountApiKey, ref),
        ).rejects.toMatchObject(NOT_FOUND);
      }
      const survivor = await app.rpc.request(AccountsSubjects.getSubAccountApiKey, {
        account_id: parentId,
        sub_account_id: childId,
        key_id: key.id,
      });
      expect(survivor.label).toBe('child key');
    });

    it("does not reach a sibling's key through a child's path", async () => {
      const { parentId, childId } = await family();
      const sibling = (await app.createAccount({ parent_account_id: parentId })).account.id;
      const siblingKey = await createChildKey(parentId, sibling);
      await expect(
        app.rpc.request(AccountsSubjects.getSubAccountApiKey, {
          account_id: parentId,
          sub_account_id: childId,
          key_id: siblingKey.id,
        }),
      ).rejects.toMatchObject({ code: AccountsErrorCode.ApiKeyNotFound });
    });

    it("checks domain scopes against the child's domains, not the parent's", async () => {
      const { parentId, childId } = await family();
      const parentDomain = await app.createDomain(parentId);
      const childDomain = await app.createDomain(childId);

      const key = await createChildKey(parentId, childId, {
        scopes: [`messages:send:{${childDomain.domain}}`],
      });
      expect(key.scopes).toEqual([
        expect.objectContaining({
          scope: `messages:send:{${childDomain.domain}}`,
          domain_id: childDomain.id,
        }),
      ]);
      await expect(
        createChildKey(parentId, childId, { scopes: [`messages:send:{${parentDomain.domain}}`] }),
      ).rejects.toMatchObject({ code: AccountsErrorCode.DomainNotOwned });
    });

    it("gives a child's first key every scope but the parent-only ones", async () => {
      const parentId = (await app.createAccount()).account.id;
      const { api_key: firstKey } = await app.createAccount({ parent_account_id: parentId });
      const scopes = firstKey.scopes.map((scope) => scope.scope);
      expect(scopes).toContain('api-keys:write');
      expect(scopes).toContain('messages:send:all');
      expect(scopes.filter((scope) => scope.startsWith('sub-account'))).toEqual([]);
    });

    it.each(['sub-accounts:read', 'sub-account-api-keys:write'])(
      'refuses %s on a child key and saves nothing',
      async (scope) => {
        const { parentId, childId } = await family();
        await expect(
          createChildKey(parentId, childId, { scopes: ['accounts:read', scope] }),
        ).rejects.toMatchObject({ code: AccountsErrorCode.InvalidScope });
        const key = await createChildKey(parentId, childId);
        await expect(
          app.rpc.request(AccountsSubjects.updateSubAccountApiKey, {
            account_id: parentId,
            sub_account_id: childId,
            key_id: key.id,
            changes: { scopes: [scope] },
          }),
        ).rejects.toMatchObject({ code: AccountsErrorCode.InvalidScope });
        const [row] = await app.dataSource.query<Array<{ count: string }>>(
          `SELECT count(*) AS count FROM accounts.api_key_scopes s
             JOIN accounts.api_keys k ON k.id = s.api_key_id
            WHERE k.account_id = $1 AND s.scope = $2`,
          [childId, scope],
        );
        expect(Number(row?.count)).toBe(0);
      },
    );

    it('broadcasts apiKeyChanged for an update and a delete', async () => {
      const recorder = new EventRecorder<ApiKeyChangedEvent>(
        app.connection,
        AccountsSubjects.apiKeyChanged,
      );
      try {
        await app.connection.flush();
        const { parentId, childId } = await family();
        const key = await createChildKey(parentId, childId);
        const ref = { account_id: parentId, sub_account_id: childId, key_id: key.id };
        await app.rpc.request(AccountsSubjects.updateSubAccountApiKey, {
          ...ref,
          changes: { label: 'renamed' },
        });
        await app.rpc.request(AccountsSubjects.deleteSubAccountApiKey, ref);
        const events = await pollUntil(
          () => recorder.events.filter((event) => event.key_id === key.id),
          (found) => found.length >= 2,
          { what: 'apiKeyChanged after a sub-account key update and delete' },
        );
        expect(events).toEqual([
          { key_id: key.id, account_id: childId },
          { key_id: key.id, account_id: childId },
        ]);
      } finally {
        recorder.stop();
      }
    });
  });
}
