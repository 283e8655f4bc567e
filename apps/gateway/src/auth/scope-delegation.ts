import { formatScope, type ParsedScope, parseScope } from '@envoi/contracts-accounts';
import { satisfies } from '@envoi/shared-edge';

import { ApiError } from '../errors/api-error';
import type { Principal } from './principal';

/** How many lacking scopes a refusal names before it only counts the rest. */
const NAMED_SCOPES_MAX = 20;

/** What a key must hold to hand the scope on: the scope itself, or its action's `:all`. */
function isGranted(held: ReadonlySet<string>, scope: ParsedScope): boolean {
  if (scope.kind === 'domain') {
    return satisfies(held, [[`${scope.action}:{domain}`]], scope.domain);
  }
  return satisfies(held, [[formatScope(scope)]]);
}

/**
 * The requested scopes that the held ones do not grant, as requested and without repeats. A scope
 * outside the catalogue is left to the accounts service, which rejects it as invalid (400).
 */
export function scopesNotGranted(
  held: ReadonlySet<string>,
  requested: readonly string[],
): string[] {
  const lacking = new Set<string>();
  for (const raw of requested) {
    const scope = parseScope(raw);
    if (scope && !isGranted(held, scope)) lacking.add(raw);
  }
  return [...lacking];
}

/**
 * A key may give a key (a new one, or new scopes of an existing one) only scopes it holds itself,
 * so that `api-keys:write` alone cannot mint a key with more power: 403, naming what is lacking.
 */
export function assertMayGrantScopes(principal: Principal, requested: readonly string[]): void {
  const lacking = scopesNotGranted(principal.scopeSet, requested);
  if (lacking.length === 0) return;
  const named = lacking.slice(0, NAMED_SCOPES_MAX).join(', ');
  const more = lacking.length - NAMED_SCOPES_MAX;
  throw new ApiError(
    403,
    `this API key cannot grant scopes it does not hold: ${named}${more > 0 ? ` and ${more} more` : ''}`,
  );
}
