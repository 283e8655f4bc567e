import { fixed } from './bench-format';
import { atLeast, targetLines, type TargetResult } from './targets';

/** The two blocks of a same-run comparison. */
export type Block = 'envoi' | 'bare';

/** One measured run of a block. */
export interface BlockRun {
  block: Block;
  round: number;
  messagesPerSecond: number;
  failures: number;
  firstFailure: string | null;
}

export const mean = (values: readonly number[]) =>
  values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length);

/**
 * `rounds` rounds of one run per block, bare first in odd rounds and Envoi first in even ones;
 * each run logged, its failures added to `problems`.
 */
export async function interleavedRounds<Run extends BlockRun>(
  rounds: number,
  measure: (block: Block, round: number) => Promise<Run>,
  context: { signal: AbortSignal; log: (line: string) => void; problems: string[] },
  line: (run: Run) => string,
): Promise<Run[]> {
  const runs: Run[] = [];
  for (let round = 1; round <= rounds; round += 1) {
    for (const block of round % 2 === 1
      ? (['bare', 'envoi'] as const)
      : (['envoi', 'bare'] as const)) {
      context.signal.throwIfAborted();
      const run = await measure(block, round);
      context.log(line(run).trim());
      if (run.failures > 0) {
        context.problems.push(
          `${block} round ${round}: ${run.failures} failed: ${run.firstFailure ?? ''}`,
        );
      }
      runs.push(run);
    }
  }
  return runs;
}

/** Mean Envoi rate ÷ mean bare rate over the runs. */
export function ratioOf(runs: readonly BlockRun[]): number {
  const rate = (block: Block) =>
    mean(runs.filter((run) => run.block === block).map((run) => run.messagesPerSecond));
  return rate('envoi') / rate('bare');
}

/**
 * Prints the runs, their ratio, where the time goes and the ratio's target (met when the ratio
 * reaches `threshold`); answers the target's result.
 */
export function printRatioTarget<Run extends BlockRun>(report: {
  heading: string;
  runs: readonly Run[];
  line: (run: Run) => string;
  breakdown: string[];
  target: string;
  threshold: number;
  issue: number;
}): TargetResult {
  const ratio = ratioOf(report.runs);
  console.log(`\n${report.heading}`);
  for (const run of report.runs) console.log(report.line(run));
  console.log(`  ratio (mean Envoi ÷ mean bare, same run): ${fixed(ratio, 2)} ×`);
  console.log('\nWhere the time goes');
  for (const line of report.breakdown) console.log(`  ${line}`);
  const result = atLeast({
    target: report.target,
    value: ratio,
    threshold: report.threshold,
    format: (value) => `${fixed(value, 2)} ×`,
    breakdown: report.breakdown,
  });
  for (const line of targetLines([result], report.issue)) console.log(line);
  return result;
}
