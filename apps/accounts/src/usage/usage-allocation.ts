/**
 * Splits `totalCents` over the buckets in proportion to their counts, in whole cents that add up
 * to the total (largest remainder: the cents lost to rounding down go to the largest fractions,
 * ties to the earlier bucket). Nothing is allocated when nothing was counted.
 */
export function allocateProportionally(totalCents: number, counts: readonly number[]): number[] {
  const volume = counts.reduce((sum, count) => sum + count, 0);
  if (volume === 0 || totalCents === 0) return counts.map(() => 0);
  const exact = counts.map((count) => (totalCents * count) / volume);
  const cents = exact.map((share) => Math.floor(share));
  let left = totalCents - cents.reduce((sum, share) => sum + share, 0);
  const byRemainder = exact
    .map((share, index) => ({ index, remainder: share - Math.floor(share) }))
    .sort((a, b) => b.remainder - a.remainder || a.index - b.index);
  for (const { index } of byRemainder) {
    if (left <= 0) break;
    cents[index] = (cents[index] ?? 0) + 1;
    left -= 1;
  }
  return cents;
}

/** An amount setting (`20`, `20.5`, `20.50`) in cents, without floating-point error. */
export function amountInCents(amount: string): number {
  const [units = '0', fraction = ''] = amount.split('.');
  return Number(units) * 100 + Number(fraction.padEnd(2, '0'));
}
