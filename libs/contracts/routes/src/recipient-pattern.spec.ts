import {
  formatRecipientPattern,
  parseRecipientAddress,
  parseRecipientPattern,
  patternMatches,
} from './recipient-pattern';

const address = (raw: string) => {
  const parsed = parseRecipientAddress(raw);
  if (!parsed) throw new Error(`not an address: ${raw}`);
  return parsed;
};

describe('parseRecipientPattern', () => {
  it.each([
    ['', { local: '', domain: null }],
    ['support', { local: 'support', domain: null }],
    ['*', { local: '*', domain: null }],
    ['ticket-*', { local: 'ticket-*', domain: null }],
    ['*-support', { local: '*-support', domain: null }],
    ['Support@Example.COM', { local: 'support', domain: 'example.com' }],
    ['*@example.com.', { local: '*', domain: 'example.com' }],
    ['reply+*@mail.example.com', { local: 'reply+*', domain: 'mail.example.com' }],
  ])('reads %j', (raw, expected) => {
    expect(parseRecipientPattern(raw)).toEqual(expected);
  });

  it.each([
    '@example.com',
    'a@b@example.com',
    '**',
    'a*b*',
    'support@localhost',
    'support@exa mple.com',
    'user%other@example.com',
    'a..b',
    '.support',
    '"quoted"@example.com',
    'a b',
    'x'.repeat(65),
    '(.*)',
    '[a-z]+',
  ])('refuses %j', (raw) => {
    expect(parseRecipientPattern(raw)).toBeNull();
  });

  it('formats what it read, lowercase', () => {
    const pattern = parseRecipientPattern('Ticket-*@Example.com');
    expect(pattern && formatRecipientPattern(pattern)).toBe('ticket-*@example.com');
    const any = parseRecipientPattern('');
    expect(any && formatRecipientPattern(any)).toBe('');
  });
});

describe('parseRecipientAddress', () => {
  it('splits and lowercases a plain address, angle brackets allowed', () => {
    expect(parseRecipientAddress('<Support@Example.com>')).toEqual({
      local: 'support',
      domain: 'example.com',
    });
  });

  it.each([
    '@relay.example:user@example.com',
    'user%other.example@example.com',
    'other.example!user@example.com',
    '"a@b"@example.com',
    '"support"@example.com',
    'user@example.com@other.example',
    'user',
    'user@',
    '@example.com',
    'user@[127.0.0.1]',
    'user@localhost',
  ])('refuses %j (items 41-42: relaying hacks)', (raw) => {
    expect(parseRecipientAddress(raw)).toBeNull();
  });
});

describe('patternMatches', () => {
  const matches = (pattern: string, to: string) => {
    const parsed = parseRecipientPattern(pattern);
    if (!parsed) throw new Error(`not a pattern: ${pattern}`);
    return patternMatches(parsed, address(to));
  };

  it.each([
    ['', 'anyone@example.com', true],
    ['*', 'anyone@example.com', true],
    ['support', 'SUPPORT@example.com', true],
    ['support', 'support2@example.com', false],
    ['ticket-*', 'ticket-123@example.com', true],
    ['ticket-*', 'ticket-@example.com', true],
    ['ticket-*', 'ticket@example.com', false],
    ['*-support', 'eu-support@example.com', true],
    ['*-support', 'support@example.com', false],
    ['a*a', 'a@example.com', false],
    ['a*a', 'aa@example.com', true],
    ['support@example.com', 'support@example.com', true],
    ['support@example.com', 'support@other.example', false],
    ['*@example.com', 'x@example.com', true],
    ['*@example.com', 'x@sub.example.com', false],
    ['reply+*', 'reply+abc@example.com', true],
    ['a.b', 'axb@example.com', false],
  ])('%j takes %j: %s', (pattern, to, expected) => {
    expect(matches(pattern, to)).toBe(expected);
  });
});
