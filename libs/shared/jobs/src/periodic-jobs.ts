import { randomUUID } from 'node:crypto';

import { PeriodicRun } from '@envoi/shared-database';
import { newTraceparent, runInTraceContext } from '@envoi/shared-observability';
import {
  Inject,
  Injectable,
  type InjectionToken,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';

import { DeclaredMethods } from './declared-methods';
import { type JobRun, PERIODIC_JOB, type PeriodicJobDeclaration } from './periodic-job.decorator';

export const PERIODIC_JOBS_SETTINGS = Symbol('envoi:periodic-jobs-settings');

/** A declared job bound to its provider. */
export interface DeclaredJob {
  /** `Owner.method`, for boot errors. */
  handler: string;
  name: string;
  intervalMs: number;
  run: (run: JobRun) => Promise<void>;
}

/**
 * Finds every @PeriodicJob method at boot and runs each on its own PeriodicRun; stops them all
 * (waiting for runs in progress) when the application shuts down.
 */
@Injectable()
export class PeriodicJobs implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(PeriodicJobs.name);
  private runs: PeriodicRun[] = [];

  constructor(
    private readonly methods: DeclaredMethods,
    private readonly moduleRef: ModuleRef,
    @Inject(PERIODIC_JOBS_SETTINGS) private readonly settingsToken: InjectionToken,
  ) {}

  /** The jobs this process declares, found on its providers. */
  declared(): DeclaredJob[] {
    const settings: unknown = this.moduleRef.get(this.settingsToken, { strict: false });
    const jobs = this.methods
      .find<PeriodicJobDeclaration>(PERIODIC_JOB)
      .map(({ declaration, name, call }): DeclaredJob => ({
        handler: name,
        name: declaration.name,
        intervalMs: declaration.intervalMs(settings),
        run: call as (run: JobRun) => Promise<void>,
      }));
    const names = jobs.map((job) => job.name);
    const repeated = names.find((name, index) => names.indexOf(name) !== index);
    if (repeated !== undefined) throw new Error(`two periodic jobs are named ${repeated}`);
    return jobs;
  }

  onApplicationBootstrap(): void {
    this.runs = this.declared().map((job) => {
      let periodic: PeriodicRun | undefined = undefined;
      const state: JobRun = {
        get stopping() {
          return periodic?.stopped ?? true;
        },
      };
      periodic = new PeriodicRun(() => this.runOnce(job, state), job.intervalMs);
      periodic.start();
      return periodic;
    });
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.all(this.runs.map((run) => run.stop()));
  }

  private runOnce(job: DeclaredJob, state: JobRun): Promise<void> {
    const context = { requestId: `job-${randomUUID()}`, traceparent: newTraceparent() };
    return runInTraceContext(context, () =>
      job.run(state).catch((error: unknown) => {
        this.logger.warn(
          `${job.name} failed; it runs again in ${job.intervalMs} ms: ${String(error)}`,
        );
      }),
    );
  }
}
