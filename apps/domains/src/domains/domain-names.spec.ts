import { DomainsErrorCode } from '@envoi/contracts-domains';

import { normalizeDkimSelector, normalizeSubdomain, requireDomainName } from './domain-names';

describe('requireDomainName', () => {
  it('normalises', () => {
    expect(requireDomainName('  Mail.Example.COM. ')).toBe('mail.example.com');
  });

  it.each(['example', 'exa mple.com', '-a.com', 'a.123', `${'a'.repeat(64)}.com`])(
    'rejects %j',
    (name) => {
      expect(() => requireDomainName(name)).toThrow(
        expect.objectContaining({ code: DomainsErrorCode.InvalidDomainName }) as Error,
      );
    },
  );
});

describe('normalizeSubdomain', () => {
  it('normalises, and takes a full name under the domain as relative', () => {
    expect(normalizeSubdomain('tracking_subdomain', ' Click. ', 'example.com')).toBe('click');
    expect(normalizeSubdomain('tracking_subdomain', 'links.mail', 'example.com')).toBe(
      'links.mail',
    );
    expect(normalizeSubdomain('tracking_subdomain', 'go.Example.com', 'example.com')).toBe('go');
  });

  it.each(['', ' ', 'a_b', '-a', 'a..b', 'x'.repeat(64)])('rejects %j', (raw) => {
    expect(() => normalizeSubdomain('media_subdomain', raw, 'example.com')).toThrow(
      expect.objectContaining({ code: DomainsErrorCode.InvalidSubdomain }) as Error,
    );
  });
});

describe('normalizeDkimSelector', () => {
  it('treats null, empty and blank as the default', () => {
    expect(normalizeDkimSelector(null)).toBeNull();
    expect(normalizeDkimSelector(undefined)).toBeNull();
    expect(normalizeDkimSelector('   ')).toBeNull();
  });

  it('trims and lowercases', () => {
    expect(normalizeDkimSelector(' S2026 ')).toBe('s2026');
    expect(normalizeDkimSelector('a'.repeat(62))).toBe('a'.repeat(62));
  });

  it.each(['a'.repeat(63), '-a', 'a-', 'a.b', 'a_b'])('rejects %j', (raw) => {
    expect(() => normalizeDkimSelector(raw)).toThrow(
      expect.objectContaining({ code: DomainsErrorCode.InvalidDkimSelector }) as Error,
    );
  });
});
