import { createHash } from 'node:crypto';

import {
  AccountsErrorCode,
  AccountsSubjects,
  type ApiKeyChangedEvent,
  type ApiKeyRecord,
  type CreatedApiKeyRecord,
} from '@envoi/contracts-accounts';
import { CommonErrorCode } from '@envoi/contracts-core';
// The conventions let apps' tests use type:testing libs; eslint.config.mjs does not yet.
import { pollUntil } from '@envoi/shared-testing';

import { type AccountsTestApp, EventRecorder } from '../accounts-test-app';

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export function apiKeyAuthSuite(getApp: () => AccountsTestApp): void {
  describe('accounts service: key verification, change events and usage', () => {
    let app: AccountsTestApp;

    beforeAll(() => {
      app = getApp();
    });

    async function createKey(
      scopes: string[] = ['messages:send:all'],
      ipAllowList: string[] = [],
      domains: string[] = [],
    ): Promise<CreatedApiKeyRecord> {
      const { account } = await app.createAccount();
      for (const domain of domains) await app.createDomain(account.id, domain);
      return app.rpc.request(AccountsSubjects.createApiKey, {
        account_id: account.id,
        key: { label: 'Test key', scopes, ip_allow_list: ipAllowList },
      });
    }

    function getKey(key: ApiKeyRecord): Promise<ApiKeyRecord> {
      return app.rpc.request(AccountsSubjects.getApiKey, {
        account_id: key.account_id,
        key_id: key.id,
      });
    }

    describe('verifyApiKey', () => {
      it('identifies a key by the SHA-256 of its secret', async () => {
        const key = await createKey(
          ['domains:read', 'messages:send:{example.com}'],
          ['192.0.2.1', '2001:db8::/32'],
          ['example.com'],
        );

        const verified = await app.rpc.request(AccountsSubjects.verifyApiKey, {
          secret_hash: sha256(key.secret_key),
        });

        expect(verified).toEqual({
          key_id: key.id,
          account_id: key.account_id,
          parent_account_id: null,
          account_status: 'active',
          scopes: ['domains:read', 'messages:send:{example.com}'],
          ip_allow_list: ['192.0.2.1/32', '2001:db8::/32'],
        });
      });

      it('reflects updates to the key', async () => {
        const key = await createKey(['domains:read']);
        await app.rpc.request(AccountsSubjects.updateApiKey, {
          account_id: key.account_id,
          key_id: key.id,
          changes: {
            scopes: ['domains:read', 'accounts:read'],
            ip_allow_list: ['198.51.100.0/24'],
          },
        });

        const verified = await app.rpc.request(AccountsSubjects.verifyApiKey, {
          secret_hash: sha256(key.secret_key),
        });

        expect(verified.scopes).toEqual(['domains:read', 'accounts:read']);
        expect(verified.ip_allow_list).toEqual(['198.51.100.0/24']);
      });

      it('answers invalid_api_key for an unknown or deleted key', async () => {
        const key = await createKey();
        await app.rpc.request(AccountsSubjects.deleteApiKey, {
          account_id: key.account_id,
          key_id: key.id,
        });

        for (const secret of [key.secret_key, `envoi-sk-${'A'.repeat(64)}`]) {
          await expect(
            app.rpc.request(AccountsSubjects.verifyApiKey, { secret_hash: sha256(secret) }),
          ).rejects.toMatchObject({
            code: AccountsErrorCode.InvalidApiKey,
            message: 'invalid API key',
          });
        }
      });

      it('accepts only a lowercase hex SHA-256, never the secret itself', async () => {
        const key = await createKey();

        for (const secret_hash of [key.secret_key, sha256(key.secret_key).toUpperCase()]) {
          await expect(
            app.rpc.request(AccountsSubjects.verifyApiKey, { secret_hash }),
          ).rejects.toMatchObject({ code: CommonErrorCode.ValidationFailed });
        }
      });
    });

    describe('apiKeyChanged', () => {
      let recorder: EventRecorder<ApiKeyChangedEvent>;

      beforeEach(async () => {
        recorder = new EventRecorder(app.connection, AccountsSubjects.apiKeyChanged);
        await app.connection.flush();
      });

      afterEach(() => {
        recorder.stop();
      });

      const eventsFor = (keyId: string) =>
        recorder.events.filter((event) => event.key_id === keyId);

      it('is broadcast after an update', async () => {
        const key = await createKey();

        await app.rpc.request(AccountsSubjects.updateApiKey, {
          account_id: key.account_id,
          key_id: key.id,
          changes: { label: 'Renamed' },
        });

        const events = await pollUntil(
          () => eventsFor(key.id),
          (found) => found.length > 0,
          {
            what: 'apiKeyChanged after update',
          },
        );
        expect(events).toEqual([{ key_id: key.id, account_id: key.account_id }]);
      });

      it('is broadcast after a delete', async () => {
        const key = await createKey();

        await app.rpc.request(AccountsSubjects.deleteApiKey, {
          account_id: key.account_id,
          key_id: key.id,
        });

        const events = await pollUntil(
          () => eventsFor(key.id),
          (found) => found.length > 0,
          {
            what: 'apiKeyChanged after delete',
          },
        );
        expect(events).toEqual([{ key_id: key.id, account_id: key.account_id }]);
      });

      it('is not broadcast for a rejected update', async () => {
        const key = await createKey();
        await expect(
          app.rpc.request(AccountsSubjects.updateApiKey, {
            account_id: key.account_id,
            key_id: key.id,
            changes: { label: 'Test key' },
          }),
        ).rejects.toMatchObject({ code: AccountsErrorCode.NothingToUpdate });

        // A later, accepted change is the marker: only its event may have arrived.
        await app.rpc.request(AccountsSubjects.updateApiKey, {
          account_id: key.account_id,
          key_id: key.id,
          changes: { label: 'Accepted' },
        });

        await pollUntil(
          () => eventsFor(key.id),
          (found) => found.length > 0,
        );
        await app.connection.flush();
        expect(eventsFor(key.id)).toHaveLength(1);
      });
    });

    describe('apiKeysUsed', () => {
      const at = (msAgo: number) => new Date(Date.now() - msAgo).toISOString();

      it('records the latest use of each key in a batch', async () => {
        const [first, second] = await Promise.all([createKey(), createKey()]);
        const firstUse = at(60_000);
        const firstLatest = at(30_000);
        const secondUse = at(45_000);

        app.rpc.emit(AccountsSubjects.apiKeysUsed, {
          uses: [
            { key_id: first.id, used_at: firstUse },
            { key_id: second.id, used_at: secondUse },
            { key_id: first.id, used_at: firstLatest },
          ],
        });

        await pollUntil(
          () => getKey(second),
          (key) => key.last_used_at !== null,
          { what: 'last_used_at of the second key' },
        );
        await expect(getKey(first)).resolves.toMatchObject({ last_used_at: firstLatest });
        await expect(getKey(second)).resolves.toMatchObject({ last_used_at: secondUse });
      });

      it('never moves last_used_at backwards', async () => {
        const [key, marker] = await Promise.all([createKey(), createKey()]);
        const recent = at(10_000);
        app.rpc.emit(AccountsSubjects.apiKeysUsed, { uses: [{ key_id: key.id, used_at: recent }] });
        await pollUntil(
          () => getKey(key),
          (found) => found.last_used_at === recent,
        );

        app.rpc.emit(AccountsSubjects.apiKeysUsed, {
          uses: [
            { key_id: key.id, used_at: at(3_600_000) },
            { key_id: marker.id, used_at: at(5_000) },
          ],
        });

        await pollUntil(
          () => getKey(marker),
          (found) => found.last_used_at !== null,
        );
        await expect(getKey(key)).resolves.toMatchObject({ last_used_at: recent });
      });

      it('clamps times ahead of the database clock and skips unreadable ones', async () => {
        const [future, unreadable] = await Promise.all([createKey(), createKey()]);

        app.rpc.emit(AccountsSubjects.apiKeysUsed, {
          uses: [
            { key_id: future.id, used_at: '2999-01-01T00:00:00.000Z' },
            { key_id: unreadable.id, used_at: 'yesterday' },
          ],
        });

        const updated = await pollUntil(
          () => getKey(future),
          (key) => key.last_used_at !== null,
        );
        expect(Date.parse(updated.last_used_at ?? '')).toBeLessThanOrEqual(Date.now() + 60_000);
        await expect(getKey(unreadable)).resolves.toMatchObject({ last_used_at: null });
      });

      it('does not touch updated_at', async () => {
        const key = await createKey();

        app.rpc.emit(AccountsSubjects.apiKeysUsed, {
          uses: [{ key_id: key.id, used_at: at(1_000) }],
        });

        const used = await pollUntil(
          () => getKey(key),
          (found) => found.last_used_at !== null,
        );
        expect(used.updated_at).toBe(key.updated_at);
      });
    });
  });
}
