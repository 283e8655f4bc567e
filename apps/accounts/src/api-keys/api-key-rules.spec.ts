import { AccountsErrorCode } from '@envoi/contracts-accounts';

import {
  canonicalizeIpAllowList,
  canonicalizeScopes,
  grantScopes,
  grantWithoutDomains,
  sameAllowList,
  sameScopeSet,
  scopeDomains,
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

describe('scopeDomains', () => {
  it('lists the distinct domains of domain scopes, in order of first appearance', () => {
    const scopes = canonicalizeScopes([
      'accounts:read',
      'messages:send:{B.example}',
      'routes:read:{a.example}',
      'messages:read:{b.example}',
      'routes:read:all',
    ]);

    expect(scopeDomains(scopes)).toEqual(['b.example']);
    expect(scopeDomains(canonicalizeScopes(['accounts:read', 'messages:send:all']))).toEqual([]);
  });
});

describe('grantScopes', () => {
  const A_ID = '6a0b9a38-0000-4000-8000-00000000000a';
  const B_ID = '6a0b9a38-0000-4000-8000-00000000000b';

  it('attaches the resolved domain id to each domain scope, null elsewhere', () => {
    const scopes = canonicalizeScopes([
      'messages:send:{a.example}',
      'accounts:read',
      'routes:read:{b.example}',
      'messages:read:{a.example}',
    ]);

    expect(
      grantScopes(scopes, {
        found: [
          { domain: 'a.example', domain_id: A_ID },
          { domain: 'b.example', domain_id: B_ID },
        ],
        missing: [],
      }),
    ).toEqual([
      { scope: 'messages:send:{a.example}', domain: 'a.example', domainId: A_ID },
      { scope: 'accounts:read', domain: null, domainId: null },
      { scope: 'routes:read:{b.example}', domain: 'b.example', domainId: B_ID },
      { scope: 'messages:read:{a.example}', domain: 'a.example', domainId: A_ID },
    ]);
  });

  it('fails with domain_not_owned naming the first domain the account does not own', () => {
    const scopes = canonicalizeScopes([
      'messages:send:{a.example}',
      'routes:read:{c.example}',
      'routes:write:{d.example}',
    ]);

    expect(
      thrownBy(() =>
        grantScopes(scopes, {
          found: [{ domain: 'a.example', domain_id: A_ID }],
          missing: ['c.example', 'd.example'],
        }),
      ),
    ).toMatchObject({
      code: AccountsErrorCode.DomainNotOwned,
      message: 'domain c.example is not a domain of this account',
    });
  });

  it('treats a domain the answer does not mention as not owned', () => {
    expect(
      thrownBy(() =>
        grantScopes(canonicalizeScopes(['messages:send:{a.example}']), {
          found: [],
          missing: [],
        }),
      ),
    ).toMatchObject({ code: AccountsErrorCode.DomainNotOwned });
  });

  it('grants scopes without domains as they are', () => {
    expect(grantWithoutDomains(canonicalizeScopes(['accounts:read', 'messages:send:all']))).toEqual(
      [
        { scope: 'accounts:read', domain: null, domainId: null },
        { scope: 'messages:send:all', domain: null, domainId: null },
      ],
    );
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
