import { READY_SIGNAL } from '@envoi/shared-observability';

/**
 * The child side of a BareProcess: answers each `{type: runType, …}` IPC message with what `run`
 * resolves to (or `failed` makes of its error), announces readiness, and exits when the parent
 * goes away or on SIGTERM/SIGINT.
 */
export function serveBareRuns<Request extends { type: string; id: number }, Result>(
  runType: Request['type'],
  run: (request: Request) => Promise<Result>,
  failed: (request: Request, error: string) => Result,
): void {
  process.on('message', (message: unknown) => {
    const request = message as Request | null;
    if (request?.type !== runType) return;
    run(request).then(
      (result) => process.send?.(result),
      (error: unknown) =>
        process.send?.(failed(request, error instanceof Error ? error.message : String(error))),
    );
  });
  // The parent's IPC channel closing (it stopped or died) ends this process too.
  process.on('disconnect', () => process.exit(0));
  process.once('SIGTERM', () => process.exit(0));
  process.once('SIGINT', () => process.exit(0));
  process.send?.(READY_SIGNAL);
}

/** What a bare run's tasks came to. */
export interface PoolOutcome {
  errors: number;
  firstError: string | null;
}

/**
 * Runs `task(0)` … `task(count - 1)` with `concurrency` at once, counting failures, until done or
 * `deadline` aborts (then the first error says so).
 */
export async function runPool(
  count: number,
  concurrency: number,
  deadline: AbortSignal,
  task: (index: number) => Promise<unknown>,
): Promise<PoolOutcome> {
  let next = 0;
  let errors = 0;
  let firstError: string | null = null;
  const worker = async () => {
    while (next < count && !deadline.aborted) {
      try {
        await task(next++);
      } catch (error) {
        errors++;
        firstError ??= error instanceof Error ? error.message : String(error);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, () => worker()));
  if (deadline.aborted) firstError ??= 'the run was stopped by its time limit';
  return { errors, firstError };
}
