/**
 * Polls `probe` until `accept` holds for its result, and returns that result. Fails with the last
 * result after `timeoutMs`. Tests wait for asynchronous outcomes with this, never with sleeps.
 */
export async function pollUntil<T>(
  probe: () => Promise<T> | T,
  accept: (value: T) => boolean,
  { timeoutMs = 10_000, intervalMs = 50, what = 'condition' } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      last = await probe();
      if (accept(last)) return last;
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  const detail = lastError instanceof Error ? lastError.message : JSON.stringify(last);
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last: ${detail}`);
}
