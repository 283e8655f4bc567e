import { CodedError } from '@envoi/contracts-core';
import { RoutesErrorCode } from '@envoi/contracts-routes';

import { assertDomainGranted, checkRouteUrl, requirePattern } from './route-rules';

const POLICY = { allowHttp: false, allowCidrs: [] };

/** The code of what `action` throws; undefined when it does not throw. */
function codeThrown(action: () => unknown): string | undefined {
  try {
    action();
    return undefined;
  } catch (error) {
    return error instanceof CodedError ? error.code : 'not a coded error';
  }
}

describe('route rules', () => {
  it('accepts an https URL and refuses others with the reason', () => {
    expect(codeThrown(() => checkRouteUrl('https://hooks.example.com/inbound', POLICY))).toBe(
      undefined,
    );
    expect(codeThrown(() => checkRouteUrl('http://hooks.example.com/inbound', POLICY))).toBe(
      RoutesErrorCode.InvalidUrl,
    );
    expect(() => checkRouteUrl('https://127.0.0.1/inbound', POLICY)).toThrow(/^invalid url: /);
  });

  it('refuses a pattern that is none of the forms, naming it', () => {
    expect(requirePattern('ticket-*')).toEqual({ local: 'ticket-*', domain: null });
    expect(() => requirePattern('a*b*')).toThrow("invalid recipient 'a*b*'");
    expect(codeThrown(() => requirePattern('a*b*'))).toBe(RoutesErrorCode.InvalidRecipient);
  });

  it('lets a domain-scoped key act only on a pattern naming one of its domains', () => {
    expect(codeThrown(() => assertDomainGranted(null, undefined))).toBe(undefined);
    expect(codeThrown(() => assertDomainGranted('a.example', ['a.example']))).toBe(undefined);
    for (const domain of [null, 'b.example']) {
      expect(codeThrown(() => assertDomainGranted(domain, ['a.example']))).toBe(
        RoutesErrorCode.ScopeNotGranted,
      );
    }
  });
});
