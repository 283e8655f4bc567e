import { domainActions, grantedDomains, satisfies } from '@envoi/shared-edge';
import type { Logger } from '@envoi/shared-observability';
import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';

import { ApiError, AUTH_MESSAGES } from '../errors/api-error';
import { BodyPipe } from '../http/request-context';
import { LOGGER } from '../logger.provider';
import {
  DomainScope,
  type DomainSource,
  PUBLIC_METADATA,
  SCOPE_POLICY_METADATA,
  type ScopePolicy,
} from './scope-policy';

type BodySource = Extract<DomainSource, { from: 'body' }>;

function insufficientScope(): ApiError {
  return new ApiError(403, AUTH_MESSAGES.insufficientScope);
}

/** The source's field read from the body as received, or undefined when it is not there. */
function readReceivedBody(source: BodySource, body: unknown): string | undefined {
  try {
    const value: unknown = source.read(body as never);
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The route's static scopes, then the domains its one `{domain}` action is granted for: every one
 * (undefined) or those listed (403 when none).
 */
export function resourceDomainScope(
  scopes: ReadonlySet<string>,
  alternatives: ScopePolicy['alternatives'],
): DomainScope {
  const [action] = domainActions(alternatives);
  const granted = grantedDomains(scopes, action);
  if (granted === 'all') {
    if (!satisfies(scopes, alternatives)) throw insufficientScope();
    return new DomainScope(undefined);
  }
  if (!granted.some((domain) => satisfies(scopes, alternatives, domain))) {
    throw insufficientScope();
  }
  return new DomainScope(granted);
}

/**
 * Guard-by-default: a route must be @Public or declare @RequireScopes, else it is denied. Every
 * requirement is checked here, `{domain}` ones against the domain the route's policy names.
 */
@Injectable()
export class ScopesGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_METADATA, targets)) return true;
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const policy = this.reflector.getAllAndOverride<ScopePolicy | undefined>(
      SCOPE_POLICY_METADATA,
      targets,
    );
    if (policy === undefined) {
      this.logger.error({ url: request.routeOptions.url }, 'route declares no scopes; denied');
      throw insufficientScope();
    }
    if (!request.principal) throw new ApiError(401, AUTH_MESSAGES.invalidKey);
    const scopes = request.principal.scopeSet;
    const { alternatives, domainFrom } = policy;
    switch (domainFrom?.from) {
      case undefined:
        if (!satisfies(scopes, alternatives)) throw insufficientScope();
        return true;
      case 'param': {
        const params = request.params as Record<string, string | undefined> | undefined;
        const domain = domainFrom.parse(params?.[domainFrom.name] ?? '');
        if (!satisfies(scopes, alternatives, domain)) throw insufficientScope();
        return true;
      }
      case 'body':
        this.checkBodyDomain(scopes, policy, domainFrom, request.body);
        return true;
      case 'resource':
        request.domainScope = resourceDomainScope(scopes, policy.alternatives);
        return true;
    }
  }

  /**
   * Decided on the body as received when that grants it; otherwise the body is validated first, so
   * an invalid body still answers 400 before a refused domain answers 403, as the handler would.
   */
  private checkBodyDomain(
    scopes: ReadonlySet<string>,
    policy: ScopePolicy,
    source: BodySource,
    body: unknown,
  ): void {
    const received = readReceivedBody(source, body);
    if (received !== undefined && satisfies(scopes, policy.alternatives, received)) return;
    const validated = new BodyPipe(source.body).transform(body);
    if (!satisfies(scopes, policy.alternatives, source.read(validated as never))) {
      throw insufficientScope();
    }
  }
}
