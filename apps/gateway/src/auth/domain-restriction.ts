import { ApiError, AUTH_MESSAGES } from '../errors/api-error';
import type { Principal } from './principal';

/**
 * The sender domains a key may use for a domain-scoped action (`messages:read`, …): undefined
 * when it holds `<action>:all` (no restriction), else the domains of its `<action>:{domain}`
 * scopes. A key with neither is refused (403).
 */
export function domainRestriction(principal: Principal, action: string): string[] | undefined {
  if (principal.scopeSet.has(`${action}:all`)) return undefined;
  const prefix = `${action}:{`;
  const domains = [...principal.scopeSet]
    .filter((scope) => scope.startsWith(prefix) && scope.endsWith('}'))
    .map((scope) => scope.slice(prefix.length, -1));
  if (domains.length === 0) throw new ApiError(403, AUTH_MESSAGES.insufficientScope);
  return domains;
}

/** The domain part of an address, as scopes and domains store it. */
export function emailDomain(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1).toLowerCase();
}
