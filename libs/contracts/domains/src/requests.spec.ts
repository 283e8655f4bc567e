import { validatePayload } from '@envoi/contracts-core';

import {
  CreateDomainRequest,
  GetDkimSigningKeyRequest,
  ListDomainsRequest,
  ResolveDomainsRequest,
  UpdateDomainRequest,
} from './requests';
import { DomainsStreamSubjects, DomainsSubjects } from './subjects';

const ACCOUNT_ID = '3f0b7f7e-8a43-4c3e-9d2a-1b2c3d4e5f60';

function failure(result: ReturnType<typeof validatePayload>): string {
  if (result.ok) throw new Error('expected validation to fail');
  return result.message;
}

describe('CreateDomainRequest', () => {
  it('accepts the contract body and strips unknown fields', () => {
    const result = validatePayload(CreateDomainRequest, {
      account_id: ACCOUNT_ID,
      body: {
        domain: 'example.com',
        tracking_subdomain: 'click',
        dkim_selector: null,
        is_admin: true,
      },
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect({ ...result.value.body }).toEqual({
      domain: 'example.com',
      tracking_subdomain: 'click',
      dkim_selector: undefined,
    });
  });

  it('reads the empty optional fields of a Go client as absent', () => {
    const result = validatePayload(CreateDomainRequest, {
      account_id: ACCOUNT_ID,
      body: {
        domain: 'example.com',
        dkim_private_key: '',
        tracking_subdomain: '',
        return_path_subdomain: '',
        subscription_subdomain: '',
        media_subdomain: null,
        dkim_rotation_interval_days: null,
        dkim_selector: '',
      },
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(JSON.parse(JSON.stringify(result.value.body))).toEqual({ domain: 'example.com' });
  });

  it('checks types and ranges', () => {
    const message = failure(
      validatePayload(CreateDomainRequest, {
        account_id: ACCOUNT_ID,
        body: { domain: 5, dkim_rotation_interval_days: 7, media_subdomain: 'x'.repeat(201) },
      }),
    );
    expect(message).toContain('body.domain must be a string');
    expect(message).toContain('body.dkim_rotation_interval_days must not be less than 30');
    expect(message).toContain(
      'body.media_subdomain must be shorter than or equal to 200 characters',
    );
  });

  it('needs a body', () => {
    expect(validatePayload(CreateDomainRequest, { account_id: ACCOUNT_ID }).ok).toBe(false);
  });
});

describe('UpdateDomainRequest', () => {
  it('takes nulls as "unchanged"', () => {
    expect(
      validatePayload(UpdateDomainRequest, {
        account_id: ACCOUNT_ID,
        domain: 'example.com',
        changes: { tracking_subdomain: null, dkim_selector: '' },
      }).ok,
    ).toBe(true);
  });

  it('leaves an empty subdomain unchanged, but keeps an empty dkim_selector (it clears it)', () => {
    const result = validatePayload(UpdateDomainRequest, {
      account_id: ACCOUNT_ID,
      domain: 'example.com',
      changes: { tracking_subdomain: '', media_subdomain: null, dkim_selector: '' },
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(JSON.parse(JSON.stringify(result.value.changes))).toEqual({ dkim_selector: '' });
  });
});

describe('ListDomainsRequest', () => {
  it('takes an optional boolean filter and a page', () => {
    expect(
      validatePayload(ListDomainsRequest, { account_id: ACCOUNT_ID, dns_valid: true }).ok,
    ).toBe(true);
    expect(
      failure(validatePayload(ListDomainsRequest, { account_id: ACCOUNT_ID, dns_valid: 'yes' })),
    ).toContain('dns_valid must be a boolean value');
  });
});

describe('ResolveDomainsRequest', () => {
  it('takes 1 to 500 names', () => {
    expect(
      validatePayload(ResolveDomainsRequest, { account_id: ACCOUNT_ID, domains: ['a.com'] }).ok,
    ).toBe(true);
    expect(validatePayload(ResolveDomainsRequest, { account_id: ACCOUNT_ID, domains: [] }).ok).toBe(
      false,
    );
    expect(
      validatePayload(ResolveDomainsRequest, {
        account_id: ACCOUNT_ID,
        domains: Array.from({ length: 501 }, (_, i) => `d${i}.com`),
      }).ok,
    ).toBe(false);
  });
});

describe('GetDkimSigningKeyRequest', () => {
  it('names one domain of one account', () => {
    const result = validatePayload(GetDkimSigningKeyRequest, {
      account_id: ACCOUNT_ID,
      domain: 'Example.COM.',
      private_key_pem: 'smuggled',
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect({ ...result.value }).toEqual({ account_id: ACCOUNT_ID, domain: 'Example.COM.' });
  });

  it('needs an account id and a domain name', () => {
    const message = failure(
      validatePayload(GetDkimSigningKeyRequest, { account_id: 'acc', domain: 'x'.repeat(301) }),
    );
    expect(message).toContain('account_id must be a UUID');
    expect(message).toContain('domain must be shorter than or equal to 300 characters');
    expect(validatePayload(GetDkimSigningKeyRequest, { account_id: ACCOUNT_ID }).ok).toBe(false);
  });
});

describe('subjects', () => {
  it('keep the DKIM key on its own versioned request subject', () => {
    expect(DomainsSubjects.getDkimSigningKey).toEqual({
      kind: 'request',
      name: 'domains.dkim.signing-key.get.v1',
    });
    expect(DomainsSubjects.authorizeSender.name).toBe('domains.sender.authorize.v1');
  });

  it('are versioned request and event subjects, and stream subjects of the events stream', () => {
    expect(DomainsSubjects.checkDns.name).toBe('domains.domain.check-dns.v1');
    expect(DomainsSubjects.domainChanged.kind).toBe('event');
    expect(DomainsStreamSubjects.dnsError).toEqual({
      kind: 'stream',
      stream: 'EVENTS',
      name: 'events.domain.dns_error.v1',
    });
  });
});
