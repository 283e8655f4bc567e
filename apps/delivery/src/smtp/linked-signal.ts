/** A signal of one's own that also follows another, until unlinked. */
export interface LinkedSignal {
  readonly signal: AbortSignal;
  /** Aborts the signal (the parent is left as it is). */
  readonly abort: () => void;
  /** Stops following the parent: call it once the signal is no longer watched. */
  readonly unlink: () => void;
}

/**
 * A signal that aborts when `parent` does or when abort() is called. Unlike AbortSignal.any,
 * which leaves each signal it makes registered on its long-lived parents until collected (tens of
 * microseconds per call once a few thousand are, one call per message), it holds one listener on
 * the parent, removed by unlink().
 */
export function linkedSignal(parent: AbortSignal): LinkedSignal {
  const controller = new AbortController();
  const abort = () => controller.abort();
  if (parent.aborted) abort();
  else parent.addEventListener('abort', abort, { once: true });
  return {
    signal: controller.signal,
    abort,
    unlink: () => parent.removeEventListener('abort', abort),
  };
}
