import { isHostname, normalizeDomainName } from '@envoi/contracts-core';

// Moved to contracts-core (the domains contract needs them too); re-exported for existing importers.
export { isHostname, normalizeDomainName } from '@envoi/contracts-core';

/**
 * The scope catalogue of spec section 5. A scope is static (`accounts:read`), or a resource
 * action with `:all` or a literal-brace domain form (`messages:send:{example.com}`).
 */
export const STATIC_SCOPES = [
  'domains:read',
  'domains:write',
  'accounts:read',
  'accounts:write',
  'accounts:billing',
  'accounts:members:read',
  'accounts:members:add',
  'accounts:members:update',
  'accounts:members:remove',
  'suppressions:read',
  'suppressions:write',
  'suppressions:delete',
  'suppressions:wipe',
  'api-keys:read',
  'api-keys:write',
  'api-keys:delete',
  'sub-accounts:read',
  'sub-accounts:write',
  'sub-accounts:delete',
  'sub-accounts:suspend',
  'sub-accounts:usage',
  'sub-account-api-keys:read',
  'sub-account-api-keys:write',
  'sub-account-api-keys:delete',
] as const;

/** Resource actions that take `:all` or `:{domain}`. */
export const DOMAIN_SCOPED_ACTIONS = [
  'messages:send',
  'messages:cancel',
  'messages:read',
  'domains:delete',
  'webhooks:read',
  'webhooks:write',
  'webhooks:delete',
  'routes:read',
  'routes:write',
  'routes:delete',
  'smtp-credentials:read',
  'smtp-credentials:write',
  'smtp-credentials:delete',
  'statistics-transactional:read',
] as const;

export type StaticScope = (typeof STATIC_SCOPES)[number];
export type DomainScopedAction = (typeof DOMAIN_SCOPED_ACTIONS)[number];

export type ParsedScope =
  | { kind: 'static'; scope: StaticScope }
  | { kind: 'all'; action: DomainScopedAction }
  | { kind: 'domain'; action: DomainScopedAction; domain: string };

const staticScopes: ReadonlySet<string> = new Set(STATIC_SCOPES);
const domainScopedActions: ReadonlySet<string> = new Set(DOMAIN_SCOPED_ACTIONS);
const DOMAIN_FORM = /^\{([^{}]+)\}$/;

/** Parses a scope string; null when it is not in the catalogue. Domains are lowercased. */
export function parseScope(raw: string): ParsedScope | null {
  if (staticScopes.has(raw)) return { kind: 'static', scope: raw as StaticScope };
  const cut = raw.lastIndexOf(':');
  if (cut <= 0) return null;
  const action = raw.slice(0, cut);
  const qualifier = raw.slice(cut + 1);
  if (!domainScopedActions.has(action)) return null;
  if (qualifier === 'all') return { kind: 'all', action: action as DomainScopedAction };
  const match = DOMAIN_FORM.exec(qualifier);
  if (!match) return null;
  const domain = normalizeDomainName(match[1]);
  if (!isHostname(domain)) return null;
  return { kind: 'domain', action: action as DomainScopedAction, domain };
}

export function formatScope(scope: ParsedScope): string {
  switch (scope.kind) {
    case 'static':
      return scope.scope;
    case 'all':
      return `${scope.action}:all`;
    case 'domain':
      return `${scope.action}:{${scope.domain}}`;
  }
}

/** Every static scope and every `:all` scope: what a full-access key holds. */
export const ALL_ACCESS_SCOPES: readonly string[] = [
  ...STATIC_SCOPES,
  ...DOMAIN_SCOPED_ACTIONS.map((action) => `${action}:all`),
];
