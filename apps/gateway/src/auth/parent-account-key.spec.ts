import { ApiError } from '../errors/api-error';
import { assertParentAccountKey, PARENT_KEY_REQUIRED } from './parent-account-key';
import type { Principal } from './principal';

function principal(parentAccountId: string | null): Principal {
  return {
    key_id: 'k',
    account_id: 'a',
    parent_account_id: parentAccountId,
    account_status: 'active',
    scopes: ['*'],
    scopeSet: new Set(['*']),
    ip_allow_list: [],
  };
}

describe('assertParentAccountKey', () => {
  it('lets a key of a top-level account through', () => {
    expect(() => assertParentAccountKey(principal(null))).not.toThrow();
  });

  it('refuses a key of a sub-account with 403', () => {
    expect(() => assertParentAccountKey(principal('p'))).toThrow(
      new ApiError(403, PARENT_KEY_REQUIRED),
    );
  });
});
