import type { SendIdempotency } from '@envoi/contracts-messages';
import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

import { fingerprintDigest } from './idempotency-policy';

/**
 * The `Idempotency-Key` this request claimed, with its fingerprint, for a service that commits
 * the key with its work (sends); undefined when the request has none.
 */
export const ClaimedIdempotency = createParamDecorator(
  (_: unknown, context: ExecutionContext): SendIdempotency | undefined => {
    const execution = context.switchToHttp().getRequest<FastifyRequest>().idempotency;
    if (execution === undefined) return undefined;
    return { key: execution.claim.key, fingerprint: fingerprintDigest(execution.fingerprint) };
  },
);
