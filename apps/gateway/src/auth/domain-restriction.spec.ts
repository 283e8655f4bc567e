import { ApiError } from '../errors/api-error';
import { domainRestriction, emailDomain } from './domain-restriction';
import type { Principal } from './principal';

function principal(scopes: string[]): Principal {
  return { scopeSet: new Set(scopes) } as unknown as Principal;
}

describe('domainRestriction', () => {
  it('is unrestricted with the action’s :all scope', () => {
    expect(
      domainRestriction(principal(['messages:read:all', 'messages:read:{a.com}']), 'messages:read'),
    ).toBeUndefined();
  });

  it('lists the domains of the action’s domain scopes only', () => {
    expect(
      domainRestriction(
        principal(['messages:read:{a.com}', 'messages:read:{b.org}', 'messages:send:{c.net}']),
        'messages:read',
      ),
    ).toEqual(['a.com', 'b.org']);
  });

  it('refuses a key with neither form with 403', () => {
    expect(() => domainRestriction(principal(['messages:send:all']), 'messages:read')).toThrow(
      ApiError,
    );
    try {
      domainRestriction(principal([]), 'messages:cancel');
    } catch (error) {
      expect((error as ApiError).status).toBe(403);
    }
  });
});

describe('emailDomain', () => {
  it('takes the part after the last @, lower-cased', () => {
    expect(emailDomain('Jane.Doe@Mail.Example.COM')).toBe('mail.example.com');
    expect(emailDomain('"a@b"@example.com')).toBe('example.com');
  });
});
