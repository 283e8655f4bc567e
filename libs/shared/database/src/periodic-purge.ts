/** How a purge run is bounded. */
export interface PurgeBounds {
  /** Rows one statement removes at most. */
  batchSize: number;
  /** Statements one run makes at most. */
  maxBatches: number;
  /** Checked between statements: a stopping service ends the run early. */
  stopped?: () => boolean;
}

/**
 * Runs one bounded batch statement (returning how many rows it removed) until a batch comes back
 * short, the run's batch budget is spent, or the service stops; returns the total.
 */
export async function purgeInBatches(
  purgeBatch: () => Promise<number>,
  bounds: PurgeBounds,
): Promise<number> {
  let total = 0;
  for (let batch = 0; batch < bounds.maxBatches && !bounds.stopped?.(); batch++) {
    const purged = await purgeBatch();
    total += purged;
    if (purged < bounds.batchSize) break;
  }
  return total;
}

/**
 * Runs `run` every `intervalMs`, counted from the end of the previous run (runs never overlap),
 * on a timer that does not keep the process alive. `stop()` cancels the next run and waits for
 * the one in progress. `run` handles its own errors.
 */
export class PeriodicRun {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private active = false;

  constructor(
    private readonly run: () => Promise<void>,
    private readonly intervalMs: number,
  ) {}

  /** Whether it is stopped (or not started): long runs check it between batches. */
  get stopped(): boolean {
    return !this.active;
  }

  start(): void {
    this.active = true;
    this.schedule();
  }

  async stop(): Promise<void> {
    this.active = false;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      this.running = this.run().finally(() => {
        this.running = undefined;
        if (this.active) this.schedule();
      });
    }, this.intervalMs);
    this.timer.unref();
  }
}
