import { currentTraceContext } from '@envoi/shared-observability';
import { Injectable, Logger } from '@nestjs/common';
import { Test } from '@nestjs/testing';

import { type JobRun, PeriodicJob } from './periodic-job.decorator';
import { PeriodicJobs } from './periodic-jobs';
import { PeriodicJobsModule } from './periodic-jobs.module';

const INTERVAL_MS = 1_000;

class ExampleSettings {
  EXAMPLE_INTERVAL_MS = INTERVAL_MS;
}

/** A job whose runs the test controls: each waits until `finish` is called. */
@Injectable()
class ExampleJob {
  runs: JobRun[] = [];
  requestIds: Array<string | undefined> = [];
  failNext = false;
  private finishRun: (() => void) | undefined;

  @PeriodicJob<ExampleSettings>({
    name: 'example job',
    intervalMs: (settings) => settings.EXAMPLE_INTERVAL_MS,
  })
  async run(run: JobRun): Promise<void> {
    this.runs.push(run);
    this.requestIds.push(currentTraceContext()?.requestId);
    if (this.failNext) {
      this.failNext = false;
      throw new Error('database gone');
    }
    await new Promise<void>((resolve) => (this.finishRun = resolve));
  }

  finish(): void {
    this.finishRun?.();
    this.finishRun = undefined;
  }
}

async function start(providers: unknown[] = [ExampleJob]) {
  const moduleRef = await Test.createTestingModule({
    imports: [PeriodicJobsModule.forRoot({ settings: ExampleSettings })],
    providers: [
      { provide: ExampleSettings, useValue: new ExampleSettings() },
      ...(providers as []),
    ],
  }).compile();
  const app = await moduleRef.init();
  return { app, job: app.get(ExampleJob) };
}

afterEach(() => {
  jest.useRealTimers();
  jest.restoreAllMocks();
});

describe('PeriodicJobs', () => {
  it('finds a declared job with its interval from the settings', async () => {
    const { app } = await start();
    expect(app.get(PeriodicJobs).declared()).toEqual([
      expect.objectContaining({
        name: 'example job',
        handler: 'ExampleJob.run',
        intervalMs: 1_000,
      }),
    ]);
    await app.close();
  });

  it('runs every interval, never two runs at once, and waits for the running one at shutdown', async () => {
    jest.useFakeTimers();
    const { app, job } = await start();
    expect(job.runs).toHaveLength(0);
    await jest.advanceTimersByTimeAsync(INTERVAL_MS);
    expect(job.runs).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(5 * INTERVAL_MS);
    expect(job.runs).toHaveLength(1);
    job.finish();
    await jest.advanceTimersByTimeAsync(INTERVAL_MS);
    expect(job.runs).toHaveLength(2);
    expect(job.runs[1]?.stopping).toBe(false);

    let closed = false;
    const closing = app.close().then(() => (closed = true));
    await jest.advanceTimersByTimeAsync(0);
    expect(closed).toBe(false);
    expect(job.runs[1]?.stopping).toBe(true);
    job.finish();
    await closing;
    await jest.advanceTimersByTimeAsync(5 * INTERVAL_MS);
    expect(job.runs).toHaveLength(2);
  });

  it('logs a failed run and runs again at the next interval, each run with a request id of its own', async () => {
    jest.useFakeTimers();
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const { app, job } = await start();
    job.failNext = true;
    await jest.advanceTimersByTimeAsync(INTERVAL_MS);
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('example job failed'));
    await jest.advanceTimersByTimeAsync(INTERVAL_MS);
    expect(job.runs).toHaveLength(2);
    const [first, second] = job.requestIds;
    expect(first).toMatch(/^job-/);
    expect(second).toMatch(/^job-/);
    expect(second).not.toBe(first);
    job.finish();
    await app.close();
  });

  it('refuses two jobs of the same name at boot', async () => {
    @Injectable()
    class SameName {
      @PeriodicJob({ name: 'example job', intervalMs: () => INTERVAL_MS })
      run(): Promise<void> {
        return Promise.resolve();
      }
    }
    await expect(start([ExampleJob, SameName])).rejects.toThrow(
      'two periodic jobs are named example job',
    );
  });
});
