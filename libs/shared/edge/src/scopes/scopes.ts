/**
 * A security requirement: every scope listed is required (spec 5.4). A route declares one or more
 * requirements, which are alternatives. `{domain}` stands for the domain the route resolves.
 */
export type ScopeRequirement = readonly string[];

const DOMAIN_PLACEHOLDER = ':{domain}';

function grants(
  scopes: ReadonlySet<string>,
  required: string,
  domain: string | undefined,
): boolean {
  if (!required.endsWith(DOMAIN_PLACEHOLDER)) return scopes.has(required);
  const action = required.slice(0, -DOMAIN_PLACEHOLDER.length);
  if (scopes.has(`${action}:all`)) return true;
  return domain !== undefined && scopes.has(`${action}:{${domain}}`);
}

/**
 * True when one alternative is fully granted. A `{domain}` requirement is met by the action's
 * `:all` scope or by its scope for that exact domain.
 */
export function satisfies(
  scopes: ReadonlySet<string>,
  alternatives: readonly ScopeRequirement[],
  domain?: string,
): boolean {
  if (alternatives.length === 0) return true;
  return alternatives.some((requirement) =>
    requirement.every((required) => grants(scopes, required, domain)),
  );
}

export function needsDomain(alternatives: readonly ScopeRequirement[]): boolean {
  return alternatives.some((requirement) =>
    requirement.some((scope) => scope.endsWith(DOMAIN_PLACEHOLDER)),
  );
}

/** The actions of the `{domain}` scopes among the alternatives (`messages:read`, …). */
export function domainActions(alternatives: readonly ScopeRequirement[]): string[] {
  const actions = alternatives.flatMap((requirement) =>
    requirement
      .filter((scope) => scope.endsWith(DOMAIN_PLACEHOLDER))
      .map((scope) => scope.slice(0, -DOMAIN_PLACEHOLDER.length)),
  );
  return [...new Set(actions)];
}

/**
 * The domains a key may use for a domain-scoped action: `'all'` when it holds `<action>:all`,
 * else the domains of its `<action>:{domain}` scopes (empty: the action is not granted at all).
 */
export function grantedDomains(scopes: ReadonlySet<string>, action: string): 'all' | string[] {
  if (scopes.has(`${action}:all`)) return 'all';
  const prefix = `${action}:{`;
  return [...scopes]
    .filter((scope) => scope.startsWith(prefix) && scope.endsWith('}'))
    .map((scope) => scope.slice(prefix.length, -1));
}

/** The domain part of an address, as scopes and domains store it. */
export function emailDomain(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1).toLowerCase();
}
