import { accountStatus } from './account-status';

const at = (minute: number) => new Date(Date.UTC(2026, 10, 1, 0, minute));
const none = { deletedAt: null, suspendedAt: null, parentSuspendedAt: null };

describe('accountStatus', () => {
  it('is active with no suspension and no deletion', () => {
    expect(accountStatus(none)).toBe('active');
  });

  it('is suspended when only the account itself is', () => {
    expect(accountStatus({ ...none, suspendedAt: at(1) })).toBe('suspended');
  });

  it('is parent-suspended when only the parent is', () => {
    expect(accountStatus({ ...none, parentSuspendedAt: at(1) })).toBe('parent-suspended');
  });

  it('follows the later of the two suspensions', () => {
    expect(accountStatus({ ...none, suspendedAt: at(1), parentSuspendedAt: at(2) })).toBe(
      'parent-suspended',
    );
    expect(accountStatus({ ...none, suspendedAt: at(3), parentSuspendedAt: at(2) })).toBe(
      'suspended',
    );
  });

  it('is deleted whatever else holds', () => {
    expect(accountStatus({ deletedAt: at(5), suspendedAt: at(1), parentSuspendedAt: at(2) })).toBe(
      'deleted',
    );
  });
});
