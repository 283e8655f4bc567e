import type { Logger } from '@envoi/shared-observability';
import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';

import { ApiError, AUTH_MESSAGES } from '../errors/api-error';
import { LOGGER } from '../logger.provider';
import type { Principal } from './principal';
import {
  needsDomain,
  PUBLIC_METADATA,
  satisfies,
  type ScopeRequirement,
  SCOPES_METADATA,
} from './scopes';

/**
 * Guard-by-default: a route must be @Public or declare @RequireScopes, else it is denied. Static
 * requirements are checked here; `{domain}` ones by the handler once it knows the domain.
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
    const alternatives = this.reflector.getAllAndOverride<ScopeRequirement[] | undefined>(
      SCOPES_METADATA,
      targets,
    );
    if (alternatives === undefined) {
      this.logger.error({ url: request.routeOptions.url }, 'route declares no scopes; denied');
      throw new ApiError(403, AUTH_MESSAGES.insufficientScope);
    }
    if (!request.principal) throw new ApiError(401, AUTH_MESSAGES.invalidKey);
    if (!needsDomain(alternatives) && !satisfies(request.principal.scopeSet, alternatives)) {
      throw new ApiError(403, AUTH_MESSAGES.insufficientScope);
    }
    return true;
  }
}

/** For handlers whose requirement involves a domain known only once the request is read. */
export function assertScopes(
  principal: Principal,
  alternatives: readonly ScopeRequirement[],
  domain: string | undefined,
): void {
  if (!satisfies(principal.scopeSet, alternatives, domain)) {
    throw new ApiError(403, AUTH_MESSAGES.insufficientScope);
  }
}
