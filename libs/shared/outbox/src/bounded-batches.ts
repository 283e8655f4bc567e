/** How large one batch of events may grow: in items, and in estimated bytes. */
export interface BatchBounds {
  maxItems: number;
  maxBytes: number;
}

/**
 * The items split, in order, into batches of at most `maxItems` items whose estimated bytes
 * (`bytesOf`) add up to at most `maxBytes`; an item larger than that alone makes a batch of one.
 */
export function boundedBatches<T>(
  items: readonly T[],
  { maxItems, maxBytes }: BatchBounds,
  bytesOf: (item: T) => number,
): T[][] {
  const batches: T[][] = [];
  let current: T[] = [];
  let currentBytes = 0;
  for (const item of items) {
    const bytes = bytesOf(item);
    if (current.length >= maxItems || (current.length > 0 && currentBytes + bytes > maxBytes)) {
      batches.push(current);
      current = [];
      currentBytes = 0;
    }
    current.push(item);
    currentBytes += bytes;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}
