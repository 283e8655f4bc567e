import type { LoggerService } from '@nestjs/common';
import pino, { type Logger } from 'pino';

export type { Logger } from 'pino';

/** JSON logs on stdout, one line per event, tagged with the service name. */
export function createLogger(
  service: string,
  level: string = process.env['LOG_LEVEL'] ?? 'info',
): Logger {
  return pino({
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
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

/** The line launchers wait for before they consider a process started. */
export const READY_MESSAGE = 'ready';
