import { validatePayload } from '@envoi/contracts-core';
import { canonicalIp } from '@envoi/shared-net';
import { createParamDecorator, type ExecutionContext, type PipeTransform } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

import type { Principal } from '../auth/principal';
import { ApiError } from '../errors/api-error';

/** What a handler needs to know about the call beyond its inputs. */
export interface RequestContext {
  principal: Principal;
  requestId: string;
  clientIp: string;
}

export const Ctx = createParamDecorator((_: unknown, context: ExecutionContext): RequestContext => {
  const request = context.switchToHttp().getRequest<FastifyRequest>();
  if (!request.principal) throw new ApiError(401, 'unauthenticated');
  return {
    principal: request.principal,
    requestId: request.id,
    clientIp: canonicalIp(request.ip) ?? request.ip,
  };
});

/** Validates a JSON body against a contract class: 400 naming every problem. */
export class BodyPipe<T extends object> implements PipeTransform<unknown, T> {
  constructor(private readonly cls: new () => T) {}

  transform(value: unknown): T {
    const result = validatePayload(this.cls, value ?? undefined);
    if (!result.ok) throw new ApiError(400, result.message);
    return result.value;
  }
}

/** The uuid syntax of path parameters (account_id, key_id, …). */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A path parameter the contract types as uuid: 400 before any service call. */
export class UuidParam implements PipeTransform<string, string> {
  constructor(private readonly name: string) {}

  transform(value: string): string {
    if (!UUID_PATTERN.test(value)) throw new ApiError(400, `invalid ${this.name}`);
    return value.toLowerCase();
  }
}
