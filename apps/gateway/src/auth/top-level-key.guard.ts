import {
  applyDecorators,
  type CanActivate,
  type ExecutionContext,
  Injectable,
  SetMetadata,
  UseGuards,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';

import { ApiError } from '../errors/api-error';

export const SUB_ACCOUNT_KEY_REFUSED =
  "a sub account's API key cannot manage API keys: they are managed with a key of its parent account";

export const PARENT_KEY_REQUIRED =
  'sub accounts can only be managed with a key of the parent account';

const REFUSAL = 'envoi:top-level-key-refusal';

/**
 * Spec 5.6: the routes of a controller (or handler) marked so are for keys of top-level accounts
 * only; a sub-account's key gets 403 with `refusal`, whatever its scopes.
 */
export function TopLevelKeyOnly(refusal: string): ClassDecorator & MethodDecorator {
  return applyDecorators(SetMetadata(REFUSAL, refusal), UseGuards(TopLevelKeyGuard));
}

@Injectable()
export class TopLevelKeyGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const principal = context.switchToHttp().getRequest<FastifyRequest>().principal;
    if (principal && principal.parent_account_id !== null) {
      const refusal = this.reflector.getAllAndOverride<string | undefined>(REFUSAL, [
        context.getHandler(),
        context.getClass(),
      ]);
      throw new ApiError(403, refusal ?? SUB_ACCOUNT_KEY_REFUSED);
    }
    return true;
  }
}
