import {
  ALL_ACCESS_SCOPES,
  DOMAIN_SCOPED_ACTIONS,
  formatScope,
  isHostname,
  normalizeDomainName,
  parseScope,
  STATIC_SCOPES,
} from './scopes';

describe('parseScope', () => {
  it.each(STATIC_SCOPES)('parses the static scope %s', (scope) => {
    expect(parseScope(scope)).toEqual({ kind: 'static', scope });
  });

  it.each(DOMAIN_SCOPED_ACTIONS)('parses %s:all', (action) => {
    expect(parseScope(`${action}:all`)).toEqual({ kind: 'all', action });
  });

  it.each(DOMAIN_SCOPED_ACTIONS)('parses %s:{example.com}', (action) => {
    expect(parseScope(`${action}:{example.com}`)).toEqual({
      kind: 'domain',
      action,
      domain: 'example.com',
    });
  });

  it('normalises the domain: lowercase, trimmed, trailing dot removed', () => {
    expect(parseScope('messages:send:{Mail.Example.COM.}')).toEqual({
      kind: 'domain',
      action: 'messages:send',
      domain: 'mail.example.com',
    });
    expect(parseScope('webhooks:read:{ example.com }')).toEqual({
      kind: 'domain',
      action: 'webhooks:read',
      domain: 'example.com',
    });
  });

  it.each([
    'messages:send',
    'messages:send:',
    'messages:send:{}',
    'messages:send:{ }',
    'messages:send:example.com',
    'messages:send:{example.com',
    'messages:send:example.com}',
    'messages:send:{{example.com}}',
    'messages:send:{example}',
    'messages:send:{example.com..}',
    'messages:send:{-example.com}',
    'messages:send:{exa_mple.com}',
    'messages:send:{1.2.3.4}',
    'messages:send:{a:b.com}',
    'messages:send:ALL',
    'messages:send:*',
    'Messages:send:all',
    'accounts:read:all',
    'accounts:read:{example.com}',
    'domains:read:{x.com}',
    'domains:read:all',
    'unknown:all',
    'ACCOUNTS:READ',
    'accounts:read ',
    ' accounts:read',
    '*',
    ':all',
    '',
  ])('rejects %j', (raw) => {
    expect(parseScope(raw)).toBeNull();
  });

  it('accepts domains:delete, the one domains action that is domain-scoped', () => {
    expect(parseScope('domains:delete:{x.com}')).toEqual({
      kind: 'domain',
      action: 'domains:delete',
      domain: 'x.com',
    });
    expect(parseScope('domains:delete')).toBeNull();
  });
});

describe('formatScope', () => {
  it('writes each kind of scope', () => {
    expect(formatScope({ kind: 'static', scope: 'accounts:read' })).toBe('accounts:read');
    expect(formatScope({ kind: 'all', action: 'messages:send' })).toBe('messages:send:all');
    expect(formatScope({ kind: 'domain', action: 'routes:write', domain: 'example.com' })).toBe(
      'routes:write:{example.com}',
    );
  });

  it('round-trips every canonical scope', () => {
    const canonical = [
      ...STATIC_SCOPES,
      ...DOMAIN_SCOPED_ACTIONS.map((action) => `${action}:all`),
      ...DOMAIN_SCOPED_ACTIONS.map((action) => `${action}:{mail.example.com}`),
    ];
    for (const scope of canonical) {
      const parsed = parseScope(scope);
      expect(parsed).not.toBeNull();
      if (parsed) expect(formatScope(parsed)).toBe(scope);
    }
  });

  it('writes the normalised form of a non-canonical domain scope', () => {
    const parsed = parseScope('messages:read:{EXAMPLE.com.}');
    expect(parsed && formatScope(parsed)).toBe('messages:read:{example.com}');
  });
});

describe('ALL_ACCESS_SCOPES', () => {
  it('holds every static scope and every :all scope', () => {
    for (const scope of STATIC_SCOPES) expect(ALL_ACCESS_SCOPES).toContain(scope);
    for (const action of DOMAIN_SCOPED_ACTIONS) {
      expect(ALL_ACCESS_SCOPES).toContain(`${action}:all`);
    }
    expect(ALL_ACCESS_SCOPES).toHaveLength(STATIC_SCOPES.length + DOMAIN_SCOPED_ACTIONS.length);
  });

  it('holds no domain scope and no duplicate, and only catalogue scopes', () => {
    expect(new Set(ALL_ACCESS_SCOPES).size).toBe(ALL_ACCESS_SCOPES.length);
    for (const scope of ALL_ACCESS_SCOPES) {
      const parsed = parseScope(scope);
      expect(parsed).not.toBeNull();
      expect(parsed?.kind).not.toBe('domain');
    }
  });
});

describe('the catalogue', () => {
  it('has no action that is both static and domain-scoped', () => {
    const statics = new Set<string>(STATIC_SCOPES);
    for (const action of DOMAIN_SCOPED_ACTIONS) expect(statics.has(action)).toBe(false);
  });
});

describe('normalizeDomainName', () => {
  it('lowercases, trims and removes one trailing dot', () => {
    expect(normalizeDomainName('  Mail.Example.COM. ')).toBe('mail.example.com');
    expect(normalizeDomainName('example.com')).toBe('example.com');
    expect(normalizeDomainName('example.com..')).toBe('example.com.');
  });
});

describe('isHostname', () => {
  it.each([
    'example.com',
    'mail.example.com',
    'a.b',
    'xn--bcher-kva.example',
    'my-host.example.co.uk',
    '1.example.com',
    'example.c0m',
    `${'a'.repeat(63)}.com`,
    // 4 labels of 63 plus 3 dots = 255 > 253; 3×63 + 61 + 3 dots = 253.
    `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`,
  ])('accepts %j', (name) => {
    expect(isHostname(name)).toBe(true);
  });

  it.each([
    '',
    'localhost',
    'example.com.',
    '.example.com',
    'example..com',
    '-example.com',
    'example-.com',
    'exa_mple.com',
    'exa mple.com',
    'Example.com',
    'example.123',
    '1.2.3.4',
    `${'a'.repeat(64)}.com`,
    `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(62)}`,
    'ex*ample.com',
    'ümlaut.de',
  ])('rejects %j', (name) => {
    expect(isHostname(name)).toBe(false);
  });
});
