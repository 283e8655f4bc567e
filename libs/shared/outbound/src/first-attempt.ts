/**
 * The first attempt of a call made straight from a stream, before the call is stored: `ended`
 * resolves with the call's result, or with null when it was never made (taken back before its
 * turn, or the replica stopped).
 */
export class FirstAttempt<Ended> {
  readonly ended: Promise<Ended | null>;
  private result: Ended | null | undefined;
  private resolve!: (result: Ended | null) => void;

  constructor() {
    this.ended = new Promise((resolve) => {
      this.resolve = resolve;
    });
  }

  /** The result once ended: undefined while the call waits for its turn or runs. */
  get outcome(): Ended | null | undefined {
    return this.result;
  }

  end(result: Ended | null): void {
    if (this.result !== undefined) return;
    this.result = result;
    this.resolve(result);
  }
}

/** Resolves once every attempt ended, or after `ms`, whichever comes first. */
export async function endedWithin(
  attempts: ReadonlyArray<Pick<FirstAttempt<unknown>, 'ended'>>,
  ms: number,
): Promise<void> {
  if (attempts.length === 0) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.all(attempts.map((attempt) => attempt.ended)),
    new Promise((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]);
  clearTimeout(timer);
}

/**
 * First attempts that outlasted their batch's wait and still run, by target (a webhook, a
 * route): while a target has one, its next calls go through the database rather than hold up
 * another batch.
 */
export class LateAttempts {
  private readonly running = new Map<string, number>();

  has(target: string): boolean {
    return this.running.has(target);
  }

  /** Counts `attempt` for `target` until it ends. */
  add(target: string, attempt: Pick<FirstAttempt<unknown>, 'ended'>): void {
    this.running.set(target, (this.running.get(target) ?? 0) + 1);
    void attempt.ended.then(() => {
      const left = (this.running.get(target) ?? 1) - 1;
      if (left > 0) this.running.set(target, left);
      else this.running.delete(target);
    });
  }
}
