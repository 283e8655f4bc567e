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
