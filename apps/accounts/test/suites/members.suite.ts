import { AccountsErrorCode, AccountsSubjects } from '@envoi/contracts-accounts';
import { CommonErrorCode } from '@envoi/contracts-core';

import { type AccountsTestApp, anyString, UNKNOWN_ID } from '../accounts-test-app';

let emailCounter = 0;
function uniqueEmail(local: string): string {
  return `${local}.${process.pid}.${Date.now()}.${++emailCounter}@example.com`;
}

export function membersSuite(getApp: () => AccountsTestApp): void {
  describe('accounts service: members', () => {
    let app: AccountsTestApp;

    beforeAll(() => {
      app = getApp();
    });

    it('adds a member, creating the user, and lists members oldest first', async () => {
      const { account } = await app.createAccount();
      const email = uniqueEmail('dev');

      const member = await app.rpc.request(AccountsSubjects.addMember, {
        account_id: account.id,
        member: { email, name: 'Dev', role: 'Developer' },
      });

      expect(member).toEqual({
        created_at: anyString,
        updated_at: anyString,
        user_id: anyString,
        account_id: account.id,
        role: 'Developer',
      });
      const list = await app.rpc.request(AccountsSubjects.listMembers, { account_id: account.id });
      expect(list.object).toBe('list');
      expect(list.data.map((entry) => [entry.user_id, entry.role])).toEqual([
        [account.owner_id, 'Administrator'],
        [member.user_id, 'Developer'],
      ]);
    });

    it('finds an existing user by lowercased email instead of creating another', async () => {
      const first = await app.createAccount();
      const second = await app.createAccount();
      const email = uniqueEmail('Shared.Person');

      const inFirst = await app.rpc.request(AccountsSubjects.addMember, {
        account_id: first.account.id,
        member: { email, role: 'Analyst' },
      });
      const inSecond = await app.rpc.request(AccountsSubjects.addMember, {
        account_id: second.account.id,
        member: { email: email.toUpperCase(), role: 'Billing Manager' },
      });

      expect(inSecond.user_id).toBe(inFirst.user_id);
      const users = await app.dataSource.query<Array<{ email: string }>>(
        'SELECT email FROM accounts.users WHERE email = $1',
        [email.toLowerCase()],
      );
      expect(users).toEqual([{ email: email.toLowerCase() }]);
    });

    it('answers member_already_exists for a second add of the same user', async () => {
      const { account } = await app.createAccount();
      const email = uniqueEmail('twice');
      await app.rpc.request(AccountsSubjects.addMember, {
        account_id: account.id,
        member: { email, role: 'Developer' },
      });

      await expect(
        app.rpc.request(AccountsSubjects.addMember, {
          account_id: account.id,
          member: { email: email.toUpperCase(), role: 'Analyst' },
        }),
      ).rejects.toMatchObject({
        code: AccountsErrorCode.MemberAlreadyExists,
        message: 'user is already a member of this account',
      });
    });

    it('answers member_already_exists when adding the owner by email', async () => {
      const email = uniqueEmail('owner');
      const { account } = await app.createAccount({ owner_email: email });

      await expect(
        app.rpc.request(AccountsSubjects.addMember, {
          account_id: account.id,
          member: { email, role: 'Developer' },
        }),
      ).rejects.toMatchObject({ code: AccountsErrorCode.MemberAlreadyExists });
    });

    it('rejects an unknown role', async () => {
      const { account } = await app.createAccount();

      await expect(
        app.rpc.request(AccountsSubjects.addMember, {
          account_id: account.id,
          member: { email: uniqueEmail('role'), role: 'Owner' as 'Developer' },
        }),
      ).rejects.toMatchObject({ code: CommonErrorCode.ValidationFailed });
    });

    it('removes a member', async () => {
      const { account } = await app.createAccount();
      const member = await app.rpc.request(AccountsSubjects.addMember, {
        account_id: account.id,
        member: { email: uniqueEmail('leaving'), role: 'Developer' },
      });

      const removed = await app.rpc.request(AccountsSubjects.removeMember, {
        account_id: account.id,
        user_id: member.user_id,
      });

      expect(removed).toEqual({ message: `member ${member.user_id} removed successfully` });
      const list = await app.rpc.request(AccountsSubjects.listMembers, { account_id: account.id });
      expect(list.data.map((entry) => entry.user_id)).toEqual([account.owner_id]);
      await expect(
        app.rpc.request(AccountsSubjects.removeMember, {
          account_id: account.id,
          user_id: member.user_id,
        }),
      ).rejects.toMatchObject({ code: AccountsErrorCode.MemberNotFound });
    });

    it('never removes the owner', async () => {
      const { account } = await app.createAccount();

      await expect(
        app.rpc.request(AccountsSubjects.removeMember, {
          account_id: account.id,
          user_id: account.owner_id,
        }),
      ).rejects.toMatchObject({ code: AccountsErrorCode.OwnerCannotBeRemoved });
    });

    it('treats a member of another account as not found', async () => {
      const mine = await app.createAccount();
      const theirs = await app.createAccount();
      const theirMember = await app.rpc.request(AccountsSubjects.addMember, {
        account_id: theirs.account.id,
        member: { email: uniqueEmail('theirs'), role: 'Developer' },
      });

      await expect(
        app.rpc.request(AccountsSubjects.removeMember, {
          account_id: mine.account.id,
          user_id: theirMember.user_id,
        }),
      ).rejects.toMatchObject({ code: AccountsErrorCode.MemberNotFound });
      await expect(
        app.rpc.request(AccountsSubjects.removeMember, {
          account_id: mine.account.id,
          user_id: theirs.account.owner_id,
        }),
      ).rejects.toMatchObject({ code: AccountsErrorCode.MemberNotFound });
      const theirList = await app.rpc.request(AccountsSubjects.listMembers, {
        account_id: theirs.account.id,
      });
      expect(theirList.data).toHaveLength(2);
    });

    it('answers account_not_found for an unknown account', async () => {
      await expect(
        app.rpc.request(AccountsSubjects.listMembers, { account_id: UNKNOWN_ID }),
      ).rejects.toMatchObject({ code: AccountsErrorCode.AccountNotFound });
      await expect(
        app.rpc.request(AccountsSubjects.addMember, {
          account_id: UNKNOWN_ID,
          member: { email: uniqueEmail('ghost'), role: 'Developer' },
        }),
      ).rejects.toMatchObject({ code: AccountsErrorCode.AccountNotFound });
      await expect(
        app.rpc.request(AccountsSubjects.removeMember, {
          account_id: UNKNOWN_ID,
          user_id: UNKNOWN_ID,
        }),
      ).rejects.toMatchObject({ code: AccountsErrorCode.AccountNotFound });
    });
  });
}
