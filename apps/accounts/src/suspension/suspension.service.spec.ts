import { toStatusRecord } from './suspension.service';

const PARENT = '11111111-1111-4111-8111-111111111111';
const CHILD = '22222222-2222-4222-8222-222222222222';

describe('toStatusRecord', () => {
  it('answers the first row as the account and the others as its sub-accounts', () => {
    expect(
      toStatusRecord([
        { account_id: PARENT, status: 'suspended' },
        { account_id: CHILD, status: 'parent-suspended' },
      ]),
    ).toEqual({
      account_id: PARENT,
      status: 'suspended',
      sub_accounts: [{ account_id: CHILD, status: 'parent-suspended' }],
    });
  });

  it('is not_found without rows', () => {
    expect(() => toStatusRecord([])).toThrow('account not found');
  });
});
