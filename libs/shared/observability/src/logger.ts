import type { LoggerService } from '@nestjs/common';
import pino, { type Logger } from 'pino';

import { traceLogFields } from './trace-context';

export type { Logger } from 'pino';

/**
 * JSON logs on stdout, one line per event, tagged with the service name and, while a trace context
 * is current, with its request id, trace id and account id.
 */
export function createLogger(
  service: string,
  level: string = process.env['LOG_LEVEL'] ?? 'info',
): Logger {
  return pino({
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    mixin: traceLogFields,
    redact: { paths: ['secret', 'secret_key', 'authorization', '*.authorization'], remove: true },
  });
}

/** Adapts pino to Nest's logger interface. */
export class NestPinoLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string): void {
    this.logger.info({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string): void {
    this.logger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string): void {
    this.logger.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string): void {
    this.logger.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string): void {
    this.logger.trace({ context }, String(message));
  }
}

export const READY_MESSAGE = 'ready';
/** What a process sends its launcher over the IPC channel once it serves. */
export const READY_SIGNAL = { type: 'envoi.ready' } as const;

/**
 * Tells the launcher (over IPC, whatever the log level) and the logs that this process serves.
 */
export function announceReady(logger: Logger, details: Record<string, unknown> = {}): void {
  logger.info(details, READY_MESSAGE);
  process.send?.(READY_SIGNAL);
}
