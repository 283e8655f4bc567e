import { domainActions, needsDomain, type ScopeRequirement } from '@envoi/shared-edge';
import {
  applyDecorators,
  createParamDecorator,
  type ExecutionContext,
  SetMetadata,
} from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

import { EdgeRoute } from '../http/edge-route';

/**
 * Where a route finds the domain its `{domain}` scope is checked against:
 * - `param`: a path parameter, parsed as the handler parses it (its 400 comes first);
 * - `body`: a field of the validated body (a sender's address, …);
 * - `resource`: known only once the resource is loaded (a message by id, a list): the guard
 *   computes the domains the key may act on and the handler must take them with
 *   `@ResourceDomains()` and pass them to the service, which filters by them.
 */
export type DomainSource =
  | { readonly from: 'param'; readonly name: string; readonly parse: (raw: string) => string }
  | {
      readonly from: 'body';
      readonly body: new () => object;
      readonly read: (body: never) => string;
    }
  | { readonly from: 'resource' };

export interface ScopePolicy {
  /** Alternatives of jointly required scopes; `[]` means any valid key. */
  readonly alternatives: readonly ScopeRequirement[];
  readonly domainFrom?: DomainSource;
}

export const SCOPE_POLICY_METADATA = 'envoi:scope-policy';
export const PUBLIC_METADATA = 'envoi:public';

export function domainFromParam(name: string, parse: (raw: string) => string): DomainSource {
  return { from: 'param', name, parse };
}

export function domainFromBody<T extends object>(
  body: new () => T,
  read: (body: T) => string,
): DomainSource {
  return { from: 'body', body, read };
}

export const DOMAIN_FROM_RESOURCE: DomainSource = { from: 'resource' };

/** Refuses, at declaration (so at boot), a policy whose `{domain}` scopes and source disagree. */
function checkPolicy(policy: ScopePolicy): void {
  const domainScoped = needsDomain(policy.alternatives);
  if (domainScoped && policy.domainFrom === undefined) {
    throw new Error(`a {domain} scope needs domainFrom: ${JSON.stringify(policy.alternatives)}`);
  }
  if (!domainScoped && policy.domainFrom !== undefined) {
    throw new Error(`domainFrom without a {domain} scope: ${JSON.stringify(policy.alternatives)}`);
  }
  if (policy.domainFrom?.from === 'resource' && domainActions(policy.alternatives).length !== 1) {
    throw new Error('domainFrom resource needs exactly one {domain} action');
  }
}

/**
 * The scopes a route requires, every one of them (`[]`: any valid key), and, when one is a
 * `{domain}` scope, where the route finds its domain. The guard enforces all of it.
 */
export function RequireScopes(
  requirement: ScopeRequirement = [],
  options: { domainFrom?: DomainSource } = {},
): MethodDecorator {
  const policy: ScopePolicy = {
    alternatives: requirement.length === 0 ? [] : [requirement],
    ...(options.domainFrom ? { domainFrom: options.domainFrom } : {}),
  };
  checkPolicy(policy);
  return SetMetadata(SCOPE_POLICY_METADATA, policy);
}

/**
 * A route reachable without credentials (tracking pixels and the like): skips the scope guard and,
 * through the Fastify route config, the authenticator.
 */
export const Public = () =>
  applyDecorators(SetMetadata(PUBLIC_METADATA, true), EdgeRoute({ public: true }));

/** The domains a key may act on where the resource decides the domain; undefined: every one. */
export class DomainScope {
  constructor(readonly domains: readonly string[] | undefined) {}

  allows(domain: string): boolean {
    return this.domains === undefined || this.domains.includes(domain);
  }

  /** The service request's restriction: `{ domains }`, or nothing when unrestricted. */
  restriction(): { domains?: string[] } {
    return this.domains === undefined ? {} : { domains: [...this.domains] };
  }
}

declare module 'fastify' {
  interface FastifyRequest {
    domainScope?: DomainScope;
  }
}

/** Reads the guard's DomainScope; a route not declared `domainFrom: 'resource'` has none. */
export function readDomainScope(_: unknown, context: ExecutionContext): DomainScope {
  const { domainScope } = context.switchToHttp().getRequest<FastifyRequest>();
  if (!domainScope)
    throw new Error('@ResourceDomains() on a route not declared domainFrom resource');
  return domainScope;
}

/** The handler's side of `domainFrom: 'resource'`: the domains to restrict the service call to. */
export const ResourceDomains = createParamDecorator(readDomainScope);
