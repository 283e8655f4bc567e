import { SetMetadata } from '@nestjs/common';

export const PERIODIC_JOB = Symbol('envoi:periodic-job');

/** What a run is told: long runs check `stopping` between batches and end early. */
export interface JobRun {
  readonly stopping: boolean;
}

export interface PeriodicJobDeclaration<Config = unknown> {
  /** Names the job in log lines. */
  name: string;
  /** The pause from the end of one run to the start of the next, from the service's config. */
  intervalMs: (config: Config) => number;
}

/**
 * Declares a provider method as a periodic job of its service: found at boot, run every
 * `intervalMs` on every replica (runs of one job never overlap), stopped on shutdown, a run's
 * failure logged and retried at the next interval. Each run has a request id of its own, so its
 * log lines can be followed. The method takes a JobRun and returns a promise.
 */
export function PeriodicJob<Config = unknown>(
  declaration: PeriodicJobDeclaration<Config>,
): MethodDecorator {
  return SetMetadata(PERIODIC_JOB, declaration);
}
