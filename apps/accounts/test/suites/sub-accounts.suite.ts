import { createHash } from 'node:crypto';

import {
  AccountsErrorCode,
  AccountsSubjects,
  type AccountStatusChangedEvent,
  type CreateSubAccountBody,
  type SubAccountRecord,
} from '@envoi/contracts-accounts';
import { CommonErrorCode } from '@envoi/contracts-core';
import { pollUntil } from '@envoi/shared-testing';

import { type AccountsTestApp, anyString, EventRecorder, UNKNOWN_ID } from '../accounts-test-app';

let subAccountCounter = 0;

export function subAccountsSuite(getApp: () => AccountsTestApp): void {
  describe('accounts service: sub-accounts', () => {
    let app: AccountsTestApp;

    beforeAll(() => {
      app = getApp();
    });

    async function newParentId(): Promise<string> {
      return (await app.createAccount()).account.id;
    }

    function createChild(
      parentId: string,
      body: Partial<CreateSubAccountBody> = {},
    ): Promise<SubAccountRecord> {
      return app.rpc.request(AccountsSubjects.createSubAccount, {
        account_id: parentId,
        sub_account: {
          name: `Child ${++subAccountCounter}`,
          website: `child${subAccountCounter}.example.com`,
          ...body,
        },
      });
    }

    const ref = (child: SubAccountRecord) => ({
      account_id: child.parent_account_id,
      sub_account_id: child.id,
    });

    /** The status a key of the account is verified with (what the gateways see). */
    async function keyStatusOf(accountId: string): Promise<string> {
      const key = await app.rpc.request(AccountsSubjects.createApiKey, {
        account_id: accountId,
        key: { label: 'child key', scopes: ['messages:send:all'] },
      });
      const secretHash = createHash('sha256').update(key.secret_key).digest('hex');
      const verified = await app.rpc.request(AccountsSubjects.verifyApiKey, {
        secret_hash: secretHash,
      });
      return verified.account_status;
    }

    describe('createSubAccount', () => {
      it('creates an active child owned by the parent owner, name trimmed, website lowercase', async () => {
        const { account: parent } = await app.createAccount();

        const child = await createChild(parent.id, {
          name: '  Acme Shop  ',
          website: 'Shop.ACME.example.com',
        });

        expect(child).toEqual({
          object: 'sub_account',
          id: anyString,
          parent_account_id: parent.id,
          created_at: anyString,
          name: 'Acme Shop',
          website: 'shop.acme.example.com',
          status: 'active',
          monthly_credit: 0,
          domain_count: 0,
          member_count: 0,
          last_activity_at: null,
        });
        const rows = await app.dataSource.query<Array<{ owner_id: string; members: number }>>(
          `SELECT owner_id, (SELECT count(*)::int FROM accounts.members m WHERE m.account_id = a.id)
             AS members FROM accounts.accounts a WHERE id = $1`,
          [child.id],
        );
        expect(rows).toEqual([{ owner_id: parent.owner_id, members: 0 }]);
        await expect(createChild(parent.id, { monthly_credit: 25 })).resolves.toMatchObject({
          monthly_credit: 25,
        });
      });

      it('refuses an unknown parent, a sub-account as parent and a suspended parent', async () => {
        await expect(createChild(UNKNOWN_ID)).rejects.toMatchObject({
          code: AccountsErrorCode.AccountNotFound,
        });
        const child = await createChild(await newParentId());
        await expect(createChild(child.id)).rejects.toMatchObject({
          code: AccountsErrorCode.NotAParentAccount,
          message: 'a sub account cannot have sub accounts of its own',
        });
        const suspended = await newParentId();
        await app.dataSource.query(
          'UPDATE accounts.accounts SET suspended_at = now() WHERE id = $1',
          [suspended],
        );
        await expect(createChild(suspended)).rejects.toMatchObject({
          code: AccountsErrorCode.AccountSuspended,
          message: 'Account is suspended',
        });
      });

      it('refuses a website that is not an FQDN and a blank name', async () => {
        const parentId = await newParentId();
        for (const body of [
          { website: 'https://acme.example.com' },
          { website: 'localhost' },
          { name: '   ' },
          { monthly_credit: -1 },
        ]) {
          await expect(createChild(parentId, body)).rejects.toMatchObject({
            code: CommonErrorCode.ValidationFailed,
          });
        }
      });
    });

    describe('listSubAccounts and getSubAccount', () => {
      it('pages the children newest first, without deleted ones or other parents', async () => {
        const parentId = await newParentId();
        const first = await createChild(parentId);
        const second = await createChild(parentId);
        const third = await createChild(parentId);
        const fourth = await createChild(parentId);
        await createChild(await newParentId());
        await app.rpc.request(AccountsSubjects.deleteSubAccount, ref(third));

        const page1 = await app.rpc.request(AccountsSubjects.listSubAccounts, {
          account_id: parentId,
          page: { limit: 2 },
        });
        expect(page1.data.map((child) => child.id)).toEqual([fourth.id, second.id]);
        expect(page1).toMatchObject({ has_more: true, next_position: anyString });
        const page2 = await app.rpc.request(AccountsSubjects.listSubAccounts, {
          account_id: parentId,
          page: { limit: 2, after: page1.next_position },
        });
        expect(page2.data).toEqual([first]);
        expect(page2.has_more).toBe(false);
      });

      it('answers account_not_found for the list of an unknown parent', async () => {
        await expect(
          app.rpc.request(AccountsSubjects.listSubAccounts, {
            account_id: UNKNOWN_ID,
            page: { limit: 10 },
          }),
        ).rejects.toMatchObject({ code: AccountsErrorCode.AccountNotFound });
      });

      it('counts the domains and members of each child', async () => {
        const parentId = await newParentId();
        const child = await createChild(parentId);
        const other = await createChild(parentId);
        await app.createDomain(child.id);
        await app.createDomain(child.id);
        await app.rpc.request(AccountsSubjects.addMember, {
          account_id: child.id,
          member: { email: `member.${child.id}@example.com`, role: 'Developer' },
        });

        await expect(app.rpc.request(AccountsSubjects.getSubAccount, ref(child))).resolves.toEqual({
          ...child,
          domain_count: 2,
          member_count: 1,
        });
        const list = await app.rpc.request(AccountsSubjects.listSubAccounts, {
          account_id: parentId,
          page: { limit: 10 },
        });
        expect(
          list.data.map((entry) => [entry.id, entry.domain_count, entry.member_count]),
        ).toEqual([
          [other.id, 0, 0],
          [child.id, 2, 1],
        ]);
      });

      it('answers sub_account_not_found for a child of another parent', async () => {
        const child = await createChild(await newParentId());
        const notFound = {
          code: AccountsErrorCode.SubAccountNotFound,
          message: 'sub account not found',
        };
        const elsewhere = { account_id: await newParentId(), sub_account_id: child.id };

        await expect(
          app.rpc.request(AccountsSubjects.getSubAccount, elsewhere),
        ).rejects.toMatchObject(notFound);
        await expect(
          app.rpc.request(AccountsSubjects.updateSubAccount, {
            ...elsewhere,
            changes: { name: 'Mine now' },
          }),
        ).rejects.toMatchObject(notFound);
        await expect(
          app.rpc.request(AccountsSubjects.suspendSubAccount, {
            ...elsewhere,
            suspension: { reason: 'x' },
          }),
        ).rejects.toMatchObject(notFound);
        await expect(
          app.rpc.request(AccountsSubjects.unsuspendSubAccount, elsewhere),
        ).rejects.toMatchObject(notFound);
        await expect(
          app.rpc.request(AccountsSubjects.deleteSubAccount, elsewhere),
        ).rejects.toMatchObject(notFound);
        await expect(
          app.rpc.request(AccountsSubjects.getSubAccount, {
            ...ref(child),
            sub_account_id: UNKNOWN_ID,
          }),
        ).rejects.toMatchObject(notFound);
      });
    });

    describe('updateSubAccount', () => {
      it('changes the given fields only', async () => {
        const child = await createChild(await newParentId(), { monthly_credit: 5 });

        const updated = await app.rpc.request(AccountsSubjects.updateSubAccount, {
          ...ref(child),
          changes: { name: ' Renamed ', website: 'NEW.example.com' },
        });

        expect(updated).toEqual({ ...child, name: 'Renamed', website: 'new.example.com' });
        await expect(
          app.rpc.request(AccountsSubjects.updateSubAccount, {
            ...ref(child),
            changes: { monthly_credit: 0 },
          }),
        ).resolves.toEqual({ ...updated, monthly_credit: 0 });
      });

      it('refuses an update that changes nothing', async () => {
        const child = await createChild(await newParentId());
        for (const changes of [{}, { name: child.name, website: child.website.toUpperCase() }]) {
          await expect(
            app.rpc.request(AccountsSubjects.updateSubAccount, { ...ref(child), changes }),
          ).rejects.toMatchObject({
            code: AccountsErrorCode.NothingToUpdate,
            message:
              'at least one of name, website and monthly_credit must be provided and differ from the current value',
          });
        }
      });
    });

    describe('status changes', () => {
      let recorder: EventRecorder<AccountStatusChangedEvent>;

      beforeEach(async () => {
        recorder = new EventRecorder(app.connection, AccountsSubjects.accountStatusChanged);
        await app.connection.flush();
      });

      afterEach(() => {
        recorder.stop();
      });

      const announced = (accountId: string, times: number) =>
        pollUntil(
          () => recorder.events.filter((event) => event.account_ids.includes(accountId)),
          (found) => found.length >= times,
          { what: `accountStatusChanged x${times} for ${accountId}` },
        );

      it('suspends with a reason and unsuspends, announcing each change', async () => {
        const child = await createChild(await newParentId());

        const suspended = await app.rpc.request(AccountsSubjects.suspendSubAccount, {
          ...ref(child),
          suspension: { reason: '  unpaid invoices ' },
        });
        expect(suspended).toEqual({ ...child, status: 'suspended' });
        await expect(keyStatusOf(child.id)).resolves.toBe('suspended');
        const rows = await app.dataSource.query<Array<{ suspension_reason: string }>>(
          'SELECT suspension_reason FROM accounts.accounts WHERE id = $1',
          [child.id],
        );
        expect(rows).toEqual([{ suspension_reason: 'unpaid invoices' }]);
        await announced(child.id, 1);

        await expect(
          app.rpc.request(AccountsSubjects.unsuspendSubAccount, ref(child)),
        ).resolves.toEqual({ ...child, status: 'active' });
        await expect(keyStatusOf(child.id)).resolves.toBe('active');
        expect(await announced(child.id, 2)).toEqual([
          { account_ids: [child.id] },
          { account_ids: [child.id] },
        ]);
      });

      it('unsuspends to parent-suspended while the parent is suspended', async () => {
        const parentId = await newParentId();
        const child = await createChild(parentId);
        await app.rpc.request(AccountsSubjects.suspendSubAccount, {
          ...ref(child),
          suspension: { reason: 'abuse' },
        });
        await app.dataSource.query(
          'UPDATE accounts.accounts SET suspended_at = now() WHERE id = $1',
          [parentId],
        );

        await expect(
          app.rpc.request(AccountsSubjects.getSubAccount, ref(child)),
        ).resolves.toMatchObject({ status: 'parent-suspended' });
        await expect(
          app.rpc.request(AccountsSubjects.unsuspendSubAccount, ref(child)),
        ).resolves.toMatchObject({ status: 'parent-suspended' });
        await expect(
          app.rpc.request(AccountsSubjects.suspendSubAccount, {
            ...ref(child),
            suspension: { reason: 'again' },
          }),
        ).resolves.toMatchObject({ status: 'suspended' });
      });

      it('refuses a suspension without a reason', async () => {
        const child = await createChild(await newParentId());
        await expect(
          app.rpc.request(AccountsSubjects.suspendSubAccount, {
            ...ref(child),
            suspension: { reason: '  ' },
          }),
        ).rejects.toMatchObject({ code: CommonErrorCode.ValidationFailed });
      });

      it('soft-deletes: readable as deleted, its keys verified as deleted, its data kept, no mutation', async () => {
        const child = await createChild(await newParentId());
        const domain = await app.createDomain(child.id);

        await expect(
          app.rpc.request(AccountsSubjects.deleteSubAccount, ref(child)),
        ).resolves.toEqual({ message: 'sub account deleted' });

        await announced(child.id, 1);
        await expect(app.rpc.request(AccountsSubjects.getSubAccount, ref(child))).resolves.toEqual({
          ...child,
          status: 'deleted',
          domain_count: 1,
        });
        await expect(keyStatusOf(child.id)).resolves.toBe('deleted');
        expect(domain.account_id).toBe(child.id);
        const notFound = { code: AccountsErrorCode.SubAccountNotFound };
        await expect(
          app.rpc.request(AccountsSubjects.deleteSubAccount, ref(child)),
        ).rejects.toMatchObject(notFound);
        await expect(
          app.rpc.request(AccountsSubjects.unsuspendSubAccount, ref(child)),
        ).rejects.toMatchObject(notFound);
        await expect(
          app.rpc.request(AccountsSubjects.updateSubAccount, {
            ...ref(child),
            changes: { name: 'Back' },
          }),
        ).rejects.toMatchObject(notFound);
      });
    });
  });
}
