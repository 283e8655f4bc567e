import { formatStatuses } from './accounts-status';

describe('formatStatuses', () => {
  it('prints the account, then each sub-account indented', () => {
    expect(
      formatStatuses({
        account_id: 'p',
        status: 'suspended',
        sub_accounts: [
          { account_id: 'c1', status: 'parent-suspended' },
          { account_id: 'c2', status: 'deleted' },
        ],
      }),
    ).toBe('account p: suspended\n  sub-account c1: parent-suspended\n  sub-account c2: deleted');
  });
});
