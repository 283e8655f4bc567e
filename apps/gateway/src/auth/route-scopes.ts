import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';

import type { DeclaredRoute } from '../routes';
import {
  PUBLIC_METADATA,
  readDomainScope,
  SCOPE_POLICY_METADATA,
  type ScopePolicy,
} from './scope-policy';

function takesResourceDomains(route: DeclaredRoute): boolean {
  const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, route.controller, route.methodName) ??
    {}) as Record<string, { factory?: unknown }>;
  return Object.values(args).some((arg) => arg.factory === readDomainScope);
}

function problemOf(route: DeclaredRoute): string | undefined {
  const policy = Reflect.getMetadata(SCOPE_POLICY_METADATA, route.handler) as
    ScopePolicy | undefined;
  const isPublic = Reflect.getMetadata(PUBLIC_METADATA, route.handler) === true;
  if (isPublic) return policy ? 'is public and declares scopes' : undefined;
  if (!policy) return 'declares no scopes and is not public';
  const source = policy.domainFrom;
  if (source?.from === 'param' && !route.path.split('/').includes(`:${source.name}`)) {
    return `takes its domain from :${source.name}, which its path lacks`;
  }
  const resource = source?.from === 'resource';
  if (resource !== takesResourceDomains(route)) {
    return resource
      ? 'takes its domain from the resource but has no @ResourceDomains() parameter'
      : 'has a @ResourceDomains() parameter but does not take its domain from the resource';
  }
  return undefined;
}

/** What is wrong with the routes' scope declarations, one line per faulty route. */
export function routeScopeProblems(routes: readonly DeclaredRoute[]): string[] {
  return routes.flatMap((route) => {
    const problem = problemOf(route);
    return problem === undefined ? [] : [`${route.name} ${problem}`];
  });
}

/** Refuses to boot a gateway with a route whose scopes the guard could not enforce. */
export function assertRouteScopes(routes: readonly DeclaredRoute[]): void {
  const problems = routeScopeProblems(routes);
  if (problems.length > 0) throw new Error(`route scopes:\n${problems.join('\n')}`);
}
