import { applyDecorators, SetMetadata } from '@nestjs/common';

import { EdgeRoute } from '../http/edge-route';

/**
 * A security requirement: every scope listed is required (spec 5.4). A route declares one or more
 * requirements, which are alternatives. `{domain}` stands for the domain the handler resolves.
 */
export type ScopeRequirement = readonly string[];

export const SCOPES_METADATA = 'envoi:scopes';
export const PUBLIC_METADATA = 'envoi:public';

/** Alternatives of jointly required scopes; `[]` (no arguments) means any valid key. */
export const RequireScopes = (...alternatives: ScopeRequirement[]) =>
  SetMetadata(SCOPES_METADATA, alternatives);

/**
 * A route reachable without credentials (tracking pixels and the like): skips the scope guard and,
 * through the Fastify route config, the authenticator.
 */
export const Public = () =>
  applyDecorators(SetMetadata(PUBLIC_METADATA, true), EdgeRoute({ public: true }));

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
