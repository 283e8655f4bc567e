import type { CreateSmtpCredentialBody } from '@envoi/contracts-accounts';

import { isWithinGrant, targetOfCreate } from './smtp-credential-rules';

const body = (fields: Partial<CreateSmtpCredentialBody>): CreateSmtpCredentialBody => ({
  name: 'n',
  scope: 'scoped',
  ...fields,
});

describe('smtp credential rules', () => {
  it('ignores the domains of a global credential', () => {
    expect(targetOfCreate(body({ scope: 'global', domains: ['a.example'] }))).toEqual({
      scope: 'global',
      domains: [],
    });
  });

  it('normalises and de-duplicates the domains of a scoped credential', () => {
    expect(targetOfCreate(body({ domains: ['A.Example.', 'a.example', 'b.example'] }))).toEqual({
      scope: 'scoped',
      domains: ['a.example', 'b.example'],
    });
  });

  it('needs domains for a scoped credential, each a hostname', () => {
    expect(() => targetOfCreate(body({}))).toThrow(
      'domains must be a non-empty list for a scoped credential',
    );
    expect(() => targetOfCreate(body({ domains: [] }))).toThrow('non-empty');
    expect(() => targetOfCreate(body({ domains: ['not a domain'] }))).toThrow(
      "invalid domain 'not a domain'",
    );
  });

  it('lets a domain-scoped key reach only credentials sharing one of its domains', () => {
    expect(isWithinGrant([], undefined)).toBe(true);
    expect(isWithinGrant(['a.example'], undefined)).toBe(true);
    expect(isWithinGrant(['a.example', 'b.example'], ['b.example'])).toBe(true);
    expect(isWithinGrant(['a.example'], ['b.example'])).toBe(false);
    expect(isWithinGrant([], ['a.example'])).toBe(false);
  });
});
