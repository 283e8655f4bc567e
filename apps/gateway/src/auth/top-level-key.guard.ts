import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

import { ApiError } from '../errors/api-error';

export const SUB_ACCOUNT_KEY_REFUSED =
  "a sub account's API key cannot manage API keys: they are managed with a key of its parent account";

/**
 * API keys, the account's own and its sub-accounts', are managed only with a key of a top-level
 * account (spec 5.6): a sub-account's key gets 403 whatever its scopes.
 */
@Injectable()
export class TopLevelKeyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const principal = context.switchToHttp().getRequest<FastifyRequest>().principal;
    if (principal && principal.parent_account_id !== null) {
      throw new ApiError(403, SUB_ACCOUNT_KEY_REFUSED);
    }
    return true;
  }
}
