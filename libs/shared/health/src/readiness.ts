/** Resolves when what it checks is ready; throws (or rejects) with the reason when it is not. */
export type ReadinessCheck = () => Promise<void> | void;

export interface ReadinessReport {
  ready: boolean;
  /** Each check's outcome: `ok`, or why it is not ready. */
  checks: Record<string, string>;
}

export const READY = 'ok';

/** How long one check may take before it counts as failed. */
export const DEFAULT_CHECK_TIMEOUT_MS = 2_000;

/**
 * A service's readiness: named checks (database, bus, consumers…) run together on demand, each
 * bounded by a timeout. Once the service starts shutting down it is not ready, whatever the checks
 * say, so that a load balancer stops routing to it before it drains.
 */
export class Readiness {
  private readonly checks = new Map<string, ReadinessCheck>();
  private stopping = false;
  private running: Promise<ReadinessReport> | undefined;

  constructor(private readonly timeoutMs = DEFAULT_CHECK_TIMEOUT_MS) {}

  register(name: string, check: ReadinessCheck): this {
    if (this.checks.has(name)) throw new Error(`readiness check "${name}" is registered twice`);
    this.checks.set(name, check);
    return this;
  }

  /** The service is shutting down: it reports itself not ready from now on. */
  markStopping(): void {
    this.stopping = true;
  }

  /** Runs every check; callers that arrive while a run is under way share its report. */
  evaluate(): Promise<ReadinessReport> {
    if (this.stopping) return Promise.resolve({ ready: false, checks: { shutdown: 'stopping' } });
    this.running ??= this.runChecks().finally(() => (this.running = undefined));
    return this.running;
  }

  private async runChecks(): Promise<ReadinessReport> {
    const entries = [...this.checks];
    const outcomes = await Promise.all(
      entries.map(([, check]) => outcomeOf(check, this.timeoutMs)),
    );
    const checks = Object.fromEntries(entries.map(([name], index) => [name, outcomes[index]]));
    return { ready: outcomes.every((outcome) => outcome === READY), checks };
  }
}

/** `ok`, or the check's failure (its message, or that it timed out); never throws. */
async function outcomeOf(check: ReadinessCheck, timeoutMs: number): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${timeoutMs} ms`), timeoutMs);
  });
  const checked = (async () => {
    await check();
    return READY;
  })().catch((error: unknown) => (error instanceof Error ? error.message : String(error)));
  try {
    return await Promise.race([checked, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/** The database answers a trivial query through the service's own pool. */
export function databaseCheck(query: (sql: string) => Promise<unknown>): ReadinessCheck {
  return async () => {
    await query('SELECT 1');
  };
}
