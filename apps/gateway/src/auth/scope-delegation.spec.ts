import { ALL_ACCESS_SCOPES } from '@envoi/contracts-accounts';

import { ApiError } from '../errors/api-error';
import type { Principal } from './principal';
import { assertMayGrantScopes, scopesNotGranted } from './scope-delegation';

const held = (...scopes: string[]): ReadonlySet<string> => new Set(scopes);

function principal(scopes: readonly string[]): Principal {
  return { scopeSet: new Set(scopes) } as unknown as Principal;
}

describe('scopesNotGranted', () => {
  it('grants a static scope only to a key holding it', () => {
    expect(scopesNotGranted(held('accounts:read'), ['accounts:read'])).toEqual([]);
    expect(scopesNotGranted(held('accounts:read'), ['accounts:write'])).toEqual(['accounts:write']);
  });

  it('grants an :all scope only to a key holding that :all scope', () => {
    expect(scopesNotGranted(held('messages:send:all'), ['messages:send:all'])).toEqual([]);
    expect(scopesNotGranted(held('messages:send:{a.com}'), ['messages:send:all'])).toEqual([
      'messages:send:all',
    ]);
    expect(scopesNotGranted(held('messages:read:all'), ['messages:send:all'])).toEqual([
      'messages:send:all',
    ]);
  });

  it('grants a domain scope to a key holding it or the action’s :all', () => {
    expect(scopesNotGranted(held('messages:send:{a.com}'), ['messages:send:{a.com}'])).toEqual([]);
    expect(scopesNotGranted(held('messages:send:all'), ['messages:send:{a.com}'])).toEqual([]);
    expect(scopesNotGranted(held('messages:send:{a.com}'), ['messages:send:{b.com}'])).toEqual([
      'messages:send:{b.com}',
    ]);
    expect(scopesNotGranted(held('messages:read:all'), ['messages:send:{a.com}'])).toEqual([
      'messages:send:{a.com}',
    ]);
  });

  it('compares domain scopes in their canonical form, naming them as requested', () => {
    expect(scopesNotGranted(held('messages:send:{a.com}'), ['messages:send:{A.COM}'])).toEqual([]);
    expect(scopesNotGranted(held(), ['messages:send:{A.COM}'])).toEqual(['messages:send:{A.COM}']);
  });

  it('lets a full-access key grant every scope', () => {
    expect(scopesNotGranted(held(...ALL_ACCESS_SCOPES), [...ALL_ACCESS_SCOPES])).toEqual([]);
  });

  it('lets a key with only api-keys:write grant nothing else', () => {
    expect(scopesNotGranted(held('api-keys:write'), [...ALL_ACCESS_SCOPES])).toEqual(
      ALL_ACCESS_SCOPES.filter((scope) => scope !== 'api-keys:write'),
    );
  });

  it('names each lacking scope once', () => {
    expect(scopesNotGranted(held(), ['accounts:read', 'accounts:read'])).toEqual(['accounts:read']);
  });

  it('leaves scopes outside the catalogue to the accounts service', () => {
    expect(scopesNotGranted(held(), ['not-a-scope', '*', 'messages:send:{}'])).toEqual([]);
  });
});

describe('assertMayGrantScopes', () => {
  it('passes when every requested scope is granted', () => {
    expect(() =>
      assertMayGrantScopes(principal(['accounts:read', 'messages:send:all']), [
        'accounts:read',
        'messages:send:{a.com}',
      ]),
    ).not.toThrow();
  });

  it('refuses with 403 naming the scopes the key lacks', () => {
    let refusal: unknown;
    try {
      assertMayGrantScopes(principal(['api-keys:write', 'accounts:read']), [
        'accounts:read',
        'accounts:write',
        'messages:send:all',
      ]);
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(ApiError);
    expect(refusal).toMatchObject({
      status: 403,
      message:
        'this API key cannot grant scopes it does not hold: accounts:write, messages:send:all',
    });
  });

  it('names at most 20 lacking scopes and counts the rest', () => {
    const requested = ALL_ACCESS_SCOPES.slice(0, 25);
    expect(() => assertMayGrantScopes(principal([]), requested)).toThrow(
      `does not hold: ${requested.slice(0, 20).join(', ')} and 5 more`,
    );
  });
});
