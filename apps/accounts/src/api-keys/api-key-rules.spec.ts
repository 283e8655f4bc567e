import { AccountsErrorCode } from '@envoi/contracts-accounts';

import {
  canonicalizeIpAllowList,
  canonicalizeScopes,
  sameAllowList,
  sameScopeSet,
} from './api-key-rules';

/** What a function throws; fails the test when it returns. */
function thrownBy(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

describe('canonicalizeScopes', () => {
  it('keeps catalogue scopes in request order, with the domain of domain scopes', () => {
    expect(canonicalizeScopes(['accounts:read', 'messages:send:{Mail.Example.com.}'])).toEqual([
      { scope: 'accounts:read', domain: null },
      { scope: 'messages:send:{mail.example.com}', domain: 'mail.example.com' },
    ]);
  });

  it('drops domain scopes covered by the same action’s :all, wherever it appears', () => {
    expect(
      canonicalizeScopes([
        'routes:read:{a.example}',
        'routes:read:all',
        'routes:write:{a.example}',
        'routes:read:{b.example}',
      ]).map((scope) => scope.scope),
    ).toEqual(['routes:read:all', 'routes:write:{a.example}']);
  });

  it('rejects scopes outside the catalogue', () => {
    expect(thrownBy(() => canonicalizeScopes(['domains:read', 'domains:fly']))).toMatchObject({
      code: AccountsErrorCode.InvalidScope,
      message: 'invalid scope: domains:fly',
    });
  });

  it('rejects duplicates, compared in canonical form', () => {
    expect(
      thrownBy(() =>
        canonicalizeScopes(['messages:read:{a.example}', 'messages:read:{A.example.}']),
      ),
    ).toMatchObject({
      code: AccountsErrorCode.InvalidScope,
      message: 'duplicate scope: messages:read:{A.example.}',
    });
  });
});

describe('canonicalizeIpAllowList', () => {
  it('returns the canonical list', () => {
    expect(canonicalizeIpAllowList(['10.0.0.5/8', '::ffff:1.2.3.4', '10.0.0.0/8'])).toEqual([
      '10.0.0.0/8',
      '1.2.3.4/32',
    ]);
  });

  it('turns list errors into invalid_ip_allow_list', () => {
    expect(thrownBy(() => canonicalizeIpAllowList(['::/0']))).toMatchObject({
      code: AccountsErrorCode.InvalidIpAllowList,
    });
  });
});

describe('comparisons', () => {
  it('compares scopes as sets', () => {
    expect(sameScopeSet(['a', 'b'], ['b', 'a'])).toBe(true);
    expect(sameScopeSet(['a', 'b'], ['a'])).toBe(false);
    expect(sameScopeSet(['a', 'b'], ['a', 'c'])).toBe(false);
  });

  it('compares allow lists as arrays', () => {
    expect(sameAllowList(['10.0.0.0/8'], ['10.0.0.0/8'])).toBe(true);
    expect(sameAllowList(['10.0.0.0/8', '1.2.3.4/32'], ['1.2.3.4/32', '10.0.0.0/8'])).toBe(false);
    expect(sameAllowList([], [])).toBe(true);
  });
});
