import { ApiKeysException } from './api-keys.exception';

/** Scope families only a top-level account's key may hold (spec 5.6). */
const PARENT_ONLY_SCOPE_PREFIXES = ['sub-accounts:', 'sub-account-api-keys:'] as const;

export function isParentOnlyScope(scope: string): boolean {
  return PARENT_ONLY_SCOPE_PREFIXES.some((prefix) => scope.startsWith(prefix));
}

/** A sub-account's key may not manage sub-accounts or their keys: such a scope is a 400. */
export function assertScopesForSubAccount(scopes: readonly string[]): void {
  const refused = scopes.find(isParentOnlyScope);
  if (refused !== undefined) throw ApiKeysException.parentOnlyScope(refused);
}
