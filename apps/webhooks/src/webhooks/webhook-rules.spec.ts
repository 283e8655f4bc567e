import { WebhooksErrorCode } from '@envoi/contracts-webhooks';

import {
  assertTargetGranted,
  checkWebhookUrl,
  normalizeWebhookDomains,
  targetOfCreate,
  targetOfUpdate,
} from './webhook-rules';

const base = { name: 'n', url: 'https://example.com/hook' };

/** The code of the CodedError `act` throws; undefined when it throws none. */
function codeThrown(act: () => unknown): string | undefined {
  try {
    act();
  } catch (error) {
    return (error as { code?: string }).code;
  }
  return undefined;
}

describe('checkWebhookUrl', () => {
  const production = { allowHttp: false, allowCidrs: [] };
  const local = { allowHttp: true, allowCidrs: ['127.0.0.0/8'] };

  it('accepts a public https URL', () => {
    expect(() => checkWebhookUrl('https://example.com/hook', production)).not.toThrow();
  });

  it.each([
    ['example.com/hook', 'must be an absolute URL'],
    ['http://example.com/hook', 'must use https'],
    ['https://user:pass@example.com/hook', 'must not contain a user name or password'],
    ['https://127.0.0.1:8443/x', ''],
    ['https://0x7f000001/x', ''],
    ['https://10.1.2.3/x', ''],
  ])('refuses %s with a 400 invalid url', (url, reason) => {
    expect(codeThrown(() => checkWebhookUrl(url, production))).toBe(WebhooksErrorCode.InvalidUrl);
    expect(() => checkWebhookUrl(url, production)).toThrow(`invalid url: ${reason}`);
  });

  it('accepts http and loopback only when the policy allows them', () => {
    expect(() => checkWebhookUrl('http://127.0.0.1:8080/x', local)).not.toThrow();
    expect(() => checkWebhookUrl('ftp://127.0.0.1/x', local)).toThrow('must use https or http');
  });
});

describe('normalizeWebhookDomains', () => {
  it('lowercases, drops the trailing dot and duplicates', () => {
    expect(normalizeWebhookDomains(['Example.COM.', 'example.com', 'b.org'])).toEqual([
      'example.com',
      'b.org',
    ]);
  });

  it('refuses a non-hostname', () => {
    expect(codeThrown(() => normalizeWebhookDomains(['not a domain']))).toBe(
      WebhooksErrorCode.InvalidDomains,
    );
  });
});

describe('targetOfCreate', () => {
  it('ignores the domains of a global webhook', () => {
    expect(targetOfCreate({ ...base, scope: 'global', domains: ['a.com'] })).toEqual({
      scope: 'global',
      domains: [],
    });
  });

  it.each([undefined, []])('refuses a scoped webhook with domains %j', (domains) => {
    expect(() =>
      targetOfCreate({ ...base, scope: 'scoped', ...(domains ? { domains } : {}) }),
    ).toThrow('domains must be a non-empty list for a scoped webhook');
  });
});

describe('targetOfUpdate', () => {
  const scoped = { scope: 'scoped' as const, domains: ['a.com'] };
  const global = { scope: 'global' as const, domains: [] };

  it('keeps scope and domains when omitted', () => {
    expect(targetOfUpdate(scoped, {})).toEqual(scoped);
    expect(targetOfUpdate(global, {})).toEqual(global);
  });

  it('replaces the domains, and [] clears them', () => {
    expect(targetOfUpdate(scoped, { domains: ['B.com'] })).toEqual({
      scope: 'scoped',
      domains: ['b.com'],
    });
    expect(targetOfUpdate(scoped, { domains: [] })).toEqual({ scope: 'scoped', domains: [] });
  });

  it('clears the domains when changing to global, ignoring those given', () => {
    expect(targetOfUpdate(scoped, { scope: 'global', domains: ['b.com'] })).toEqual(global);
  });

  it('needs non-empty domains in the same request to go from global to scoped', () => {
    expect(() => targetOfUpdate(global, { scope: 'scoped' })).toThrow('non-empty');
    expect(() => targetOfUpdate(global, { scope: 'scoped', domains: [] })).toThrow('non-empty');
    expect(targetOfUpdate(global, { scope: 'scoped', domains: ['a.com'] })).toEqual(scoped);
  });
});

describe('assertTargetGranted', () => {
  it('lets a key with every domain act on anything', () => {
    expect(() => assertTargetGranted({ scope: 'global', domains: [] }, undefined)).not.toThrow();
  });

  it('lets a domain-scoped key act only on scoped webhooks of its domains', () => {
    const granted = ['a.com', 'b.com'];
    expect(() =>
      assertTargetGranted({ scope: 'scoped', domains: ['a.com'] }, granted),
    ).not.toThrow();
    expect(codeThrown(() => assertTargetGranted({ scope: 'global', domains: [] }, granted))).toBe(
      WebhooksErrorCode.ScopeNotGranted,
    );
    expect(
      codeThrown(() =>
        assertTargetGranted({ scope: 'scoped', domains: ['a.com', 'c.com'] }, granted),
      ),
    ).toBe(WebhooksErrorCode.ScopeNotGranted);
  });
});
