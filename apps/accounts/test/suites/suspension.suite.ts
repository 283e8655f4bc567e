import {
  AccountsErrorCode,
  AccountsSubjects,
  type AccountStatusChangedEvent,
  type SubAccountRecord,
} from '@envoi/contracts-accounts';
import { CommonErrorCode } from '@envoi/contracts-core';
import { pollUntil } from '@envoi/shared-testing';

import { type AccountsTestApp, EventRecorder, UNKNOWN_ID } from '../accounts-test-app';

let childCounter = 0;

export function suspensionSuite(getApp: () => AccountsTestApp): void {
  describe('accounts service: operator suspension', () => {
    let app: AccountsTestApp;
    let recorder: EventRecorder<AccountStatusChangedEvent>;

    beforeAll(() => {
      app = getApp();
    });

    beforeEach(async () => {
      recorder = new EventRecorder(app.connection, AccountsSubjects.accountStatusChanged);
      await app.connection.flush();
    });

    afterEach(() => {
      recorder.stop();
    });

    function createChild(parentId: string): Promise<SubAccountRecord> {
      return app.rpc.request(AccountsSubjects.createSubAccount, {
        account_id: parentId,
        sub_account: { name: `Held ${++childCounter}`, website: `held${childCounter}.example.com` },
      });
    }

    const suspend = (accountId: string, reason = 'unpaid invoices') =>
      app.rpc.request(AccountsSubjects.suspendAccount, { account_id: accountId, reason });
    const unsuspend = (accountId: string) =>
      app.rpc.request(AccountsSubjects.unsuspendAccount, { account_id: accountId });
    const byParent = (child: SubAccountRecord, action: 'suspend' | 'unsuspend' | 'delete') => {
      const ref = { account_id: child.parent_account_id, sub_account_id: child.id };
      if (action === 'suspend') {
        return app.rpc.request(AccountsSubjects.suspendSubAccount, {
          ...ref,
          suspension: { reason: 'by the parent' },
        });
      }
      if (action === 'unsuspend') return app.rpc.request(AccountsSubjects.unsuspendSubAccount, ref);
      return app.rpc.request(AccountsSubjects.deleteSubAccount, ref);
    };

    /** A parent with a child never suspended, one suspended before the parent, and a deleted one. */
    async function family() {
      const parentId = (await app.createAccount()).account.id;
      const plain = await createChild(parentId);
      const ownFirst = await createChild(parentId);
      const deleted = await createChild(parentId);
      await byParent(ownFirst, 'suspend');
      await byParent(deleted, 'delete');
      return { parentId, plain, ownFirst, deleted };
    }

    it("cascades a parent's suspension and restores each child on unsuspension", async () => {
      const { parentId, plain, ownFirst, deleted } = await family();

      await expect(suspend(parentId, '  abuse report  ')).resolves.toEqual({
        account_id: parentId,
        status: 'suspended',
        sub_accounts: [
          { account_id: plain.id, status: 'parent-suspended' },
          { account_id: ownFirst.id, status: 'parent-suspended' },
          { account_id: deleted.id, status: 'deleted' },
        ],
      });
      const rows = await app.dataSource.query<Array<{ suspension_reason: string | null }>>(
        'SELECT suspension_reason FROM accounts.accounts WHERE id = ANY($1::uuid[]) ORDER BY seq',
        [[parentId, plain.id, ownFirst.id]],
      );
      expect(rows.map((row) => row.suspension_reason)).toEqual([
        'abuse report',
        null,
        'by the parent',
      ]);

      await expect(createChild(parentId)).rejects.toMatchObject({
        code: AccountsErrorCode.AccountSuspended,
      });
      // A child suspended while its parent is: its own suspension is the later one.
      await byParent(plain, 'suspend');
      await expect(
        app.rpc.request(AccountsSubjects.accountStatuses, {
          account_ids: [plain.id, ownFirst.id, deleted.id, parentId, UNKNOWN_ID],
        }),
      ).resolves.toEqual({
        statuses: expect.arrayContaining([
          { account_id: parentId, status: 'suspended' },
          { account_id: plain.id, status: 'suspended' },
          { account_id: ownFirst.id, status: 'parent-suspended' },
          { account_id: deleted.id, status: 'deleted' },
        ]) as unknown,
      });
      await byParent(plain, 'unsuspend');

      await expect(unsuspend(parentId)).resolves.toEqual({
        account_id: parentId,
        status: 'active',
        sub_accounts: [
          { account_id: plain.id, status: 'active' },
          { account_id: ownFirst.id, status: 'suspended' },
          { account_id: deleted.id, status: 'deleted' },
        ],
      });
    });

    it('keeps a child suspended after its parent suspended when the parent is unsuspended', async () => {
      const { parentId, plain } = await family();
      await suspend(parentId);
      await byParent(plain, 'suspend');
      const after = await unsuspend(parentId);
      expect(after.sub_accounts).toContainEqual({ account_id: plain.id, status: 'suspended' });
      await byParent(plain, 'unsuspend');
      await expect(
        app.rpc.request(AccountsSubjects.accountStatuses, { account_ids: [plain.id] }),
      ).resolves.toEqual({ statuses: [{ account_id: plain.id, status: 'active' }] });
    });

    it("suspends a sub-account itself without touching its parent, and a suspended parent's child stays parent-suspended", async () => {
      const { parentId, plain } = await family();
      await expect(suspend(plain.id)).resolves.toEqual({
        account_id: plain.id,
        status: 'suspended',
        sub_accounts: [],
      });
      await expect(
        app.rpc.request(AccountsSubjects.accountStatuses, { account_ids: [parentId] }),
      ).resolves.toEqual({ statuses: [{ account_id: parentId, status: 'active' }] });
      await unsuspend(plain.id);

      await suspend(parentId);
      await expect(unsuspend(plain.id)).resolves.toMatchObject({ status: 'parent-suspended' });
      await expect(unsuspend(parentId)).resolves.toMatchObject({
        sub_accounts: expect.arrayContaining([
          { account_id: plain.id, status: 'active' },
        ]) as unknown,
      });
    });

    it('answers the status accountStatuses gives in the sending settings', async () => {
      const { parentId, plain, ownFirst, deleted } = await family();
      await suspend(parentId);
      await byParent(plain, 'suspend');
      const everyone = [parentId, plain.id, ownFirst.id, deleted.id];

      const { statuses } = await app.rpc.request(AccountsSubjects.accountStatuses, {
        account_ids: everyone,
      });
      const settings = await Promise.all(
        everyone.map((accountId) =>
          app.rpc.request(AccountsSubjects.getSendingSettings, { account_id: accountId }),
        ),
      );

      expect(settings.map(({ account_id, status }) => ({ account_id, status }))).toEqual(
        everyone.map((accountId) => statuses.find((entry) => entry.account_id === accountId)),
      );
      expect(new Set(settings.map((setting) => setting.status))).toEqual(
        new Set(['suspended', 'parent-suspended', 'deleted']),
      );
    });

    it('announces the account and all its children after each change', async () => {
      const { parentId, plain, ownFirst, deleted } = await family();
      const everyone = [parentId, plain.id, ownFirst.id, deleted.id];
      await suspend(parentId);
      await unsuspend(parentId);

      const events = await pollUntil(
        () => recorder.events.filter((event) => event.account_ids.includes(parentId)),
        (found) => found.length >= 2,
        { what: `two accountStatusChanged events naming ${parentId}` },
      );
      expect(events).toEqual([{ account_ids: everyone }, { account_ids: everyone }]);
    });

    it('refuses an unknown account, a blank reason and too many ids', async () => {
      await expect(suspend(UNKNOWN_ID)).rejects.toMatchObject({
        code: AccountsErrorCode.AccountNotFound,
      });
      await expect(unsuspend(UNKNOWN_ID)).rejects.toMatchObject({
        code: AccountsErrorCode.AccountNotFound,
      });
      const parentId = (await app.createAccount()).account.id;
      await expect(suspend(parentId, '   ')).rejects.toMatchObject({
        code: CommonErrorCode.ValidationFailed,
      });
      await expect(
        app.rpc.request(AccountsSubjects.accountStatuses, {
          account_ids: Array.from({ length: 1_001 }, () => UNKNOWN_ID),
        }),
      ).rejects.toMatchObject({ code: CommonErrorCode.ValidationFailed });
      await expect(
        app.rpc.request(AccountsSubjects.accountStatuses, { account_ids: [] }),
      ).resolves.toEqual({ statuses: [] });
    });
  });
}
