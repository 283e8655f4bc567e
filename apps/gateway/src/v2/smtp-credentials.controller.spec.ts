import { CreateSmtpCredentialBody } from '@envoi/contracts-accounts';

import { DomainScope } from '../auth/scope-policy';
import { assertCreateGranted } from './smtp-credentials.controller';

const body = (fields: Partial<CreateSmtpCredentialBody>): CreateSmtpCredentialBody =>
  Object.assign(new CreateSmtpCredentialBody(), { name: 'n', scope: 'scoped', ...fields });

describe('smtp credential creation scopes', () => {
  const all = new DomainScope(undefined);
  const onlyA = new DomainScope(['a.example']);

  it('lets write:all create global and scoped credentials', () => {
    expect(() => assertCreateGranted(body({ scope: 'global' }), all)).not.toThrow();
    expect(() => assertCreateGranted(body({ domains: ['x.example'] }), all)).not.toThrow();
  });

  it('refuses a global credential to a domain-scoped key', () => {
    expect(() => assertCreateGranted(body({ scope: 'global' }), onlyA)).toThrow(
      'insufficient permissions for the required scope',
    );
  });

  it('needs the write scope of every listed domain', () => {
    expect(() => assertCreateGranted(body({ domains: ['A.example.'] }), onlyA)).not.toThrow();
    expect(() => assertCreateGranted(body({ domains: ['a.example', 'b.example'] }), onlyA)).toThrow(
      'insufficient permissions',
    );
  });
});
