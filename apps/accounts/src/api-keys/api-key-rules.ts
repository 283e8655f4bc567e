import { formatScope, type ParsedScope, parseScope } from '@envoi/contracts-accounts';
import type { ResolvedDomains } from '@envoi/contracts-domains';
import { canonicalizeAllowList, IpAllowListError } from '@envoi/shared-net';

import { ApiKeysException } from './api-keys.exception';

/** A scope as stored: canonical text, plus the domain of a `{domain}` scope. */
export interface CanonicalScope {
  scope: string;
  domain: string | null;
}

/**
 * Validates and canonicalises requested scopes (platform notes 3.9): each must be in the
 * catalogue; duplicates (after canonicalisation) are rejected; a domain scope is dropped when the
 * same action's `:all` is granted too. Order of first appearance is kept.
 */
export function canonicalizeScopes(requested: readonly string[]): CanonicalScope[] {
  const parsed: ParsedScope[] = [];
  const seen = new Set<string>();
  for (const raw of requested) {
    const scope = parseScope(raw);
    if (!scope) throw ApiKeysException.invalidScope(raw);
    const canonical = formatScope(scope);
    if (seen.has(canonical)) throw ApiKeysException.duplicateScope(raw);
    seen.add(canonical);
    parsed.push(scope);
  }
  const actionsWithAll = new Set(
    parsed.flatMap((scope) => (scope.kind === 'all' ? [scope.action] : [])),
  );
  return parsed
    .filter((scope) => !(scope.kind === 'domain' && actionsWithAll.has(scope.action)))
    .map((scope) => ({
      scope: formatScope(scope),
      domain: scope.kind === 'domain' ? scope.domain : null,
    }));
}

/** A scope ready to store: for a domain scope, also the id of the owned domain it names. */
export interface GrantedScope extends CanonicalScope {
  domainId: string | null;
}

/** The distinct domains named by domain scopes, in order of first appearance. */
export function scopeDomains(scopes: readonly CanonicalScope[]): string[] {
  return [...new Set(scopes.flatMap((scope) => (scope.domain === null ? [] : [scope.domain])))];
}

/**
 * Attaches domain ids to the scopes from the domains service's answer; the first domain scope
 * whose domain the account does not own fails the whole grant (platform notes 3.9).
 */
export function grantScopes(
  scopes: readonly CanonicalScope[],
  resolved: ResolvedDomains,
): GrantedScope[] {
  const ids = new Map(resolved.found.map((found) => [found.domain, found.domain_id]));
  return scopes.map((scope) => {
    if (scope.domain === null) return { ...scope, domainId: null };
    const domainId = ids.get(scope.domain);
    if (domainId === undefined) throw ApiKeysException.domainNotOwned(scope.domain);
    return { ...scope, domainId };
  });
}

/** For scopes known to name no domain (the full-access key): nothing to resolve. */
export function grantWithoutDomains(scopes: readonly CanonicalScope[]): GrantedScope[] {
  return grantScopes(scopes, { found: [], missing: [] });
}

/** Canonical allow list (spec 5.7), or `accounts.invalid_ip_allow_list`. */
export function canonicalizeIpAllowList(entries: readonly string[]): string[] {
  try {
    return canonicalizeAllowList(entries);
  } catch (error) {
    if (error instanceof IpAllowListError) throw ApiKeysException.invalidIpAllowList(error.message);
    throw error;
  }
}

/** Scope sets are compared without regard to order. */
export function sameScopeSet(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const set = new Set(a);
  return b.every((scope) => set.has(scope));
}

/** Allow lists are compared as canonical arrays. */
export function sameAllowList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((entry, index) => entry === b[index]);
}
