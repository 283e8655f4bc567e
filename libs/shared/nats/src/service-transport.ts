import type { RpcErrorBody } from '@envoi/contracts-core';
import {
  CodedError,
  CommonErrorCode,
  formatValidationErrors,
  isRpcErrorBody,
} from '@envoi/contracts-core';
import type { Logger } from '@envoi/shared-observability';
import {
  ArgumentsHost,
  Catch,
  type ExceptionFilter,
  type INestMicroservice,
  type PipeTransform,
  ValidationPipe,
} from '@nestjs/common';
import { type CustomStrategy, RpcException } from '@nestjs/microservices';
import { throwError } from 'rxjs';

import { DrainingNatsServer } from './draining-nats-server';

/**
 * Every replica of a service joins one queue group named after the service. On close it leaves
 * the group, gives the handlers in flight up to `gracePeriodMs` to reply, and closes as soon as
 * none is left (see DrainingNatsServer; Nest's own graceful shutdown, a fixed sleep, is off).
 */
export function natsMicroserviceOptions(
  service: string,
  servers: string[],
  gracePeriodMs = 3_000,
): CustomStrategy {
  return {
    strategy: new DrainingNatsServer(
      { servers, queue: service, name: service, maxReconnectAttempts: -1 },
      gracePeriodMs,
    ),
  };
}

/** Validates bus payloads against their contract classes; a failure is `common.validation_failed`. */
export function rpcValidationPipe(): PipeTransform {
  return new ValidationPipe({
    transform: true,
    whitelist: true,
    forbidUnknownValues: true,
    exceptionFactory: (errors) =>
      new CodedError(CommonErrorCode.ValidationFailed, formatValidationErrors(errors).join('; ')),
  });
}

const CONNECTION_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  '57P01',
  '57P03',
]);

/** True for errors that mean "a dependency is down", answered as retryable 503s. */
export function isUnavailableError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && CONNECTION_ERROR_CODES.has(code)) return true;
  const message = (error as { message?: unknown }).message;
  return (
    typeof message === 'string' &&
    /Connection terminated|connection timeout|timeout exceeded when trying to connect/i.test(
      message,
    )
  );
}

/** What an error a handler threw is: coded (its own body), a dependency unavailable, or a bug. */
export type RpcErrorKind = 'coded' | 'unavailable' | 'internal';

/** The `{code, message}` body answering whatever a handler throws; internals never leave. */
export function rpcErrorBody(exception: unknown): { body: RpcErrorBody; kind: RpcErrorKind } {
  if (exception instanceof CodedError) return { body: exception.toBody(), kind: 'coded' };
  if (exception instanceof RpcException) {
    const error = exception.getError();
    if (isRpcErrorBody(error)) {
      return { body: { code: error.code, message: error.message }, kind: 'coded' };
    }
  }
  if (isUnavailableError(exception)) {
    return {
      body: { code: CommonErrorCode.Unavailable, message: 'service temporarily unavailable' },
      kind: 'unavailable',
    };
  }
  return {
    body: { code: CommonErrorCode.Internal, message: 'internal server error' },
    kind: 'internal',
  };
}

/** Answers whatever a handler throws with its rpcErrorBody, logging the uncoded ones. */
@Catch()
export class RpcErrorFilter implements ExceptionFilter {
  constructor(private readonly logger: Logger) {}

  catch(exception: unknown, _host: ArgumentsHost) {
    const { body, kind } = rpcErrorBody(exception);
    if (kind === 'unavailable') this.logger.warn({ err: exception }, 'dependency unavailable');
    if (kind === 'internal') {
      this.logger.error({ err: exception }, 'unhandled error in message handler');
    }
    return throwError(() => body);
  }
}

/** Installs the pipe and filter every service uses. */
export function configureServiceTransport(app: INestMicroservice, logger: Logger): void {
  app.useGlobalPipes(rpcValidationPipe());
  app.useGlobalFilters(new RpcErrorFilter(logger));
}
