import { AccountsErrorCode } from '@envoi/contracts-accounts';

import type { AccountEntity } from '../accounts/account.entity';
import { assertMayCreateSubAccount, subAccountChanges } from './sub-account-rules';

/** The code and message of what `act` throws. */
function failureOf(act: () => unknown): { code?: unknown; message?: unknown } {
  try {
    act();
  } catch (error) {
    const { code, message } = error as { code?: unknown; message?: unknown };
    return { code, message };
  }
  throw new Error('did not throw');
}

const current = { name: 'Acme', website: 'acme.example.com', monthlyCredit: 10 };

function parent(fields: Partial<AccountEntity>): AccountEntity {
  return {
    parentAccountId: null,
    deletedAt: null,
    suspendedAt: null,
    ...fields,
  } as AccountEntity;
}

describe('subAccountChanges', () => {
  it('keeps only the given fields that differ, the website lowercase', () => {
    expect(
      subAccountChanges(current, { name: 'Acme', website: 'Shop.Example.COM', monthly_credit: 10 }),
    ).toEqual({ website: 'shop.example.com' });
    expect(subAccountChanges(current, { monthly_credit: 0 })).toEqual({ monthlyCredit: 0 });
    expect(subAccountChanges(current, { name: 'Beta', monthly_credit: 11 })).toEqual({
      name: 'Beta',
      monthlyCredit: 11,
    });
  });

  it('refuses an update with nothing given or nothing different', () => {
    const nothing = AccountsErrorCode.NothingToUpdate;
    expect(failureOf(() => subAccountChanges(current, {})).code).toBe(nothing);
    expect(
      failureOf(() =>
        subAccountChanges(current, {
          name: 'Acme',
          website: 'ACME.example.com.',
          monthly_credit: 10,
        }),
      ).code,
    ).toBe(nothing);
  });
});

describe('assertMayCreateSubAccount', () => {
  it('lets an active top-level account create', () => {
    expect(() => assertMayCreateSubAccount(parent({}))).not.toThrow();
  });

  it('refuses a sub-account, and a suspended or deleted parent', () => {
    expect(failureOf(() => assertMayCreateSubAccount(parent({ parentAccountId: 'p' })))).toEqual({
      code: AccountsErrorCode.NotAParentAccount,
      message: 'a sub account cannot have sub accounts of its own',
    });
    for (const fields of [{ suspendedAt: new Date() }, { deletedAt: new Date() }]) {
      expect(failureOf(() => assertMayCreateSubAccount(parent(fields)))).toEqual({
        code: AccountsErrorCode.AccountSuspended,
        message: 'Account is suspended',
      });
    }
  });
});
