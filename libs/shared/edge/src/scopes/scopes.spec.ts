import {
  domainActions,
  emailDomain,
  grantedDomains,
  needsDomain,
  satisfies,
  type ScopeRequirement,
} from './scopes';

const held = (...scopes: string[]): ReadonlySet<string> => new Set(scopes);

describe('satisfies', () => {
  it('grants any valid key when the route declares no requirement', () => {
    expect(satisfies(held(), [])).toBe(true);
    expect(satisfies(held('accounts:read'), [], 'example.com')).toBe(true);
  });

  it('grants a static scope only when it is held exactly', () => {
    expect(satisfies(held('accounts:read'), [['accounts:read']])).toBe(true);
    expect(satisfies(held('accounts:write'), [['accounts:read']])).toBe(false);
    expect(satisfies(held(), [['accounts:read']])).toBe(false);
  });

  it('treats the scopes of one requirement as jointly required (AND)', () => {
    const both: ScopeRequirement[] = [['accounts:read', 'api-keys:read']];
    expect(satisfies(held('accounts:read', 'api-keys:read'), both)).toBe(true);
    expect(satisfies(held('accounts:read'), both)).toBe(false);
    expect(satisfies(held('api-keys:read'), both)).toBe(false);
  });

  it('treats requirements as alternatives (OR)', () => {
    const either: ScopeRequirement[] = [['accounts:read'], ['sub-accounts:read']];
    expect(satisfies(held('accounts:read'), either)).toBe(true);
    expect(satisfies(held('sub-accounts:read'), either)).toBe(true);
    expect(satisfies(held('accounts:write'), either)).toBe(false);
  });

  it('needs one alternative granted in full, not pieces of several', () => {
    const alternatives: ScopeRequirement[] = [
      ['accounts:read', 'accounts:write'],
      ['sub-accounts:read', 'sub-accounts:write'],
    ];
    expect(satisfies(held('accounts:read', 'sub-accounts:write'), alternatives)).toBe(false);
    expect(satisfies(held('sub-accounts:read', 'sub-accounts:write'), alternatives)).toBe(true);
  });

  describe('the {domain} placeholder', () => {
    const send: ScopeRequirement[] = [['messages:send:{domain}']];

    it('is met by the action’s :all scope, with or without a domain', () => {
      expect(satisfies(held('messages:send:all'), send, 'example.com')).toBe(true);
      expect(satisfies(held('messages:send:all'), send)).toBe(true);
    });

    it('is met by the scope for exactly that domain', () => {
      expect(satisfies(held('messages:send:{example.com}'), send, 'example.com')).toBe(true);
    });

    it('is not met by the scope of another domain', () => {
      expect(satisfies(held('messages:send:{example.com}'), send, 'other.com')).toBe(false);
      expect(satisfies(held('messages:send:{example.com}'), send, 'mail.example.com')).toBe(false);
      expect(satisfies(held('messages:send:{mail.example.com}'), send, 'example.com')).toBe(false);
    });

    it('is met only by :all when no domain is known', () => {
      expect(satisfies(held('messages:send:{example.com}'), send)).toBe(false);
      expect(satisfies(held('messages:send:{undefined}'), send)).toBe(false);
    });

    it('is not met by another action’s scopes', () => {
      expect(satisfies(held('messages:read:all'), send, 'example.com')).toBe(false);
      expect(satisfies(held('messages:read:{example.com}'), send, 'example.com')).toBe(false);
    });

    it('is not met by a scope literally holding the placeholder', () => {
      expect(satisfies(held('messages:send:{domain}'), send, 'example.com')).toBe(false);
      expect(satisfies(held('messages:send:{domain}'), send)).toBe(false);
    });

    it('combines with static scopes inside one requirement', () => {
      const mixed: ScopeRequirement[] = [['messages:read:{domain}', 'domains:read']];
      expect(
        satisfies(held('messages:read:{example.com}', 'domains:read'), mixed, 'example.com'),
      ).toBe(true);
      expect(satisfies(held('messages:read:{example.com}'), mixed, 'example.com')).toBe(false);
      expect(satisfies(held('domains:read'), mixed, 'example.com')).toBe(false);
    });
  });
});

describe('needsDomain', () => {
  it('is true when any scope of any alternative holds the placeholder', () => {
    expect(needsDomain([['messages:send:{domain}']])).toBe(true);
    expect(needsDomain([['accounts:read'], ['domains:read', 'messages:read:{domain}']])).toBe(true);
  });

  it('is false for static and :all requirements and for no requirement', () => {
    expect(needsDomain([])).toBe(false);
    expect(needsDomain([['accounts:read'], ['messages:send:all']])).toBe(false);
    expect(needsDomain([[]])).toBe(false);
  });
});

describe('domainActions', () => {
  it('names each action of a {domain} scope once', () => {
    expect(domainActions([['messages:read:{domain}', 'domains:read']])).toEqual(['messages:read']);
    expect(domainActions([['messages:send:{domain}'], ['messages:send:{domain}']])).toEqual([
      'messages:send',
    ]);
    expect(domainActions([['accounts:read']])).toEqual([]);
  });
});

describe('grantedDomains', () => {
  it('is all with the action’s :all scope', () => {
    expect(
      grantedDomains(held('messages:read:all', 'messages:read:{a.com}'), 'messages:read'),
    ).toBe('all');
  });

  it('lists the domains of the action’s domain scopes only', () => {
    expect(
      grantedDomains(
        held('messages:read:{a.com}', 'messages:read:{b.org}', 'messages:send:{c.net}'),
        'messages:read',
      ),
    ).toEqual(['a.com', 'b.org']);
  });

  it('is empty for a key with neither form', () => {
    expect(grantedDomains(held('messages:send:all'), 'messages:read')).toEqual([]);
    expect(grantedDomains(held(), 'messages:cancel')).toEqual([]);
  });
});

describe('emailDomain', () => {
  it('takes the part after the last @, lower-cased', () => {
    expect(emailDomain('Jane.Doe@Mail.Example.COM')).toBe('mail.example.com');
    expect(emailDomain('"a@b"@example.com')).toBe('example.com');
  });
});
