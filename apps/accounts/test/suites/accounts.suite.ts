import { createHash } from 'node:crypto';

import { AccountsErrorCode, AccountsSubjects, ALL_ACCESS_SCOPES } from '@envoi/contracts-accounts';
import { CommonErrorCode } from '@envoi/contracts-core';

import { type AccountsTestApp, anyString, UNKNOWN_ID } from '../accounts-test-app';

export function accountsSuite(getApp: () => AccountsTestApp): void {
  describe('accounts service: accounts', () => {
    let app: AccountsTestApp;

    beforeAll(() => {
      app = getApp();
    });

    describe('createAccount', () => {
      it('creates the account with the documented defaults', async () => {
        const { account } = await app.createAccount({ name: 'Acme' });

        expect(account).toEqual({
          object: 'account',
          id: anyString,
          parent_account_id: null,
          created_at: anyString,
          updated_at: anyString,
          name: 'Acme',
          website: null,
          about: '',
          track_opens: false,
          track_clicks: false,
          reject_bad_recipients: false,
          reject_mistyped_recipients: false,
          message_metadata_retention: 30,
          message_data_retention: 7,
          owner_id: anyString,
        });
        expect(new Date(account.created_at).toISOString()).toBe(account.created_at);
      });

      it('makes the owner an Administrator member', async () => {
        const { account } = await app.createAccount();

        const members = await app.rpc.request(AccountsSubjects.listMembers, {
          account_id: account.id,
        });

        expect(members).toEqual({
          object: 'list',
          data: [
            expect.objectContaining({
              user_id: account.owner_id,
              account_id: account.id,
              role: 'Administrator',
            }),
          ],
        });
      });

      it('issues a "Full access" key holding every static and :all scope, and shows its secret once', async () => {
        const { account, api_key } = await app.createAccount();

        expect(api_key).toMatchObject({
          object: 'api_key',
          account_id: account.id,
          label: 'Full access',
          last_used_at: null,
          ip_allow_list: [],
        });
        expect(api_key.secret_key).toMatch(/^envoi-sk-[A-Za-z0-9]{64}$/);
        expect(api_key.scopes.map((scope) => scope.scope)).toEqual([...ALL_ACCESS_SCOPES]);

        const verified = await app.rpc.request(AccountsSubjects.verifyApiKey, {
          secret_hash: createHash('sha256').update(api_key.secret_key).digest('hex'),
        });
        expect(verified).toMatchObject({ key_id: api_key.id, account_id: account.id });

        const fetched = await app.rpc.request(AccountsSubjects.getApiKey, {
          account_id: account.id,
          key_id: api_key.id,
        });
        expect(fetched).not.toHaveProperty('secret_key');
      });

      it('stores the owner email trimmed and lowercased, and reuses the user for the same email', async () => {
        const email = `Owner.${Date.now()}@Example.COM`;
        const first = await app.createAccount({ owner_email: email, owner_name: 'Olive' });
        const second = await app.createAccount({ owner_email: email.toLowerCase() });

        expect(second.account.owner_id).toBe(first.account.owner_id);
        const [user] = await app.dataSource.query<Array<{ email: string; name: string }>>(
          'SELECT email, name FROM accounts.users WHERE id = $1',
          [first.account.owner_id],
        );
        expect(user).toEqual({ email: email.toLowerCase(), name: 'Olive' });
      });

      it('creates an owner without an email address when none is given', async () => {
        const { account } = await app.createAccount();

        const [user] = await app.dataSource.query<Array<{ email: string | null }>>(
          'SELECT email FROM accounts.users WHERE id = $1',
          [account.owner_id],
        );
        expect(user).toEqual({ email: null });
      });

      it('links a sub-account to its parent', async () => {
        const parent = await app.createAccount();

        const child = await app.createAccount({ parent_account_id: parent.account.id });

        expect(child.account.parent_account_id).toBe(parent.account.id);
        const verified = await app.rpc.request(AccountsSubjects.verifyApiKey, {
          secret_hash: createHash('sha256').update(child.api_key.secret_key).digest('hex'),
        });
        expect(verified.parent_account_id).toBe(parent.account.id);
      });

      it('rejects an unknown parent and leaves nothing behind', async () => {
        const name = `Orphan ${Date.now()}`;

        await expect(
          app.createAccount({ name, parent_account_id: UNKNOWN_ID }),
        ).rejects.toMatchObject({ code: AccountsErrorCode.AccountNotFound });

        const rows = await app.dataSource.query<unknown[]>(
          'SELECT 1 FROM accounts.accounts WHERE name = $1',
          [name],
        );
        expect(rows).toHaveLength(0);
      });

      it('validates the payload', async () => {
        await expect(
          app.rpc.request(AccountsSubjects.createAccount, { name: '' }),
        ).rejects.toMatchObject({ code: CommonErrorCode.ValidationFailed });
      });
    });

    describe('getAccount', () => {
      it('returns the account', async () => {
        const { account } = await app.createAccount();

        await expect(
          app.rpc.request(AccountsSubjects.getAccount, { account_id: account.id }),
        ).resolves.toEqual(account);
      });

      it('answers account_not_found for an unknown account', async () => {
        await expect(
          app.rpc.request(AccountsSubjects.getAccount, { account_id: UNKNOWN_ID }),
        ).rejects.toMatchObject({
          code: AccountsErrorCode.AccountNotFound,
          message: 'account not found',
        });
      });
    });

    describe('getSendingSettings', () => {
      it("answers the account's sending defaults and its monthly credit in one reply", async () => {
        const { account } = await app.createAccount();
        await expect(
          app.rpc.request(AccountsSubjects.getSendingSettings, { account_id: account.id }),
        ).resolves.toEqual({
          account_id: account.id,
          status: 'active',
          track_opens: account.track_opens,
          track_clicks: account.track_clicks,
          message_metadata_retention: account.message_metadata_retention,
          message_data_retention: account.message_data_retention,
          monthly_credit: 0,
        });
      });

      it('answers account_not_found for an unknown account', async () => {
        await expect(
          app.rpc.request(AccountsSubjects.getSendingSettings, { account_id: UNKNOWN_ID }),
        ).rejects.toMatchObject({ code: AccountsErrorCode.AccountNotFound });
      });
    });

    describe('updateAccount', () => {
      it('applies only the provided fields and returns the record after the update', async () => {
        const { account } = await app.createAccount({ name: 'Before' });

        const updated = await app.rpc.request(AccountsSubjects.updateAccount, {
          account_id: account.id,
          changes: {
            website: 'https://example.com',
            track_opens: true,
            message_data_retention: 0,
          },
        });

        expect(updated).toEqual({
          ...account,
          website: 'https://example.com',
          track_opens: true,
          message_data_retention: 0,
          updated_at: anyString,
        });
        expect(Date.parse(updated.updated_at)).toBeGreaterThan(Date.parse(account.updated_at));
        await expect(
          app.rpc.request(AccountsSubjects.getAccount, { account_id: account.id }),
        ).resolves.toEqual(updated);
      });

      it('keeps the website when null or "" is sent with other changes (Go clients send every field)', async () => {
        const { account } = await app.createAccount();
        await app.rpc.request(AccountsSubjects.updateAccount, {
          account_id: account.id,
          changes: { website: 'https://example.com' },
        });
        for (const unset of [null, '']) {
          const updated = await app.rpc.request(AccountsSubjects.updateAccount, {
            account_id: account.id,
            // As a Go client sends it: the contract class reads null and "" as absent.
            changes: { name: `Renamed ${String(unset)}`, website: unset as string },
          });
          expect(updated.website).toBe('https://example.com');
        }
      });

      it('keeps earlier changes when later updates touch other fields', async () => {
        const { account } = await app.createAccount();

        await app.rpc.request(AccountsSubjects.updateAccount, {
          account_id: account.id,
          changes: { name: 'Renamed', about: 'We send mail.' },
        });
        const updated = await app.rpc.request(AccountsSubjects.updateAccount, {
          account_id: account.id,
          changes: { reject_bad_recipients: true, message_metadata_retention: 10 },
        });

        expect(updated).toMatchObject({
          name: 'Renamed',
          about: 'We send mail.',
          reject_bad_recipients: true,
          message_metadata_retention: 10,
          track_clicks: false,
        });
      });

      it('answers account_not_found for an unknown account', async () => {
        await expect(
          app.rpc.request(AccountsSubjects.updateAccount, {
            account_id: UNKNOWN_ID,
            changes: { name: 'Nobody' },
          }),
        ).rejects.toMatchObject({ code: AccountsErrorCode.AccountNotFound });
      });

      it('rejects out-of-range values', async () => {
        const { account } = await app.createAccount();

        await expect(
          app.rpc.request(AccountsSubjects.updateAccount, {
            account_id: account.id,
            changes: { message_metadata_retention: 31 },
          }),
        ).rejects.toMatchObject({ code: CommonErrorCode.ValidationFailed });
      });
    });
  });
}
