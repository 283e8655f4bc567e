import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { repositoryRoot } from '../runtime/runtime-files';
import { makeDataDir, Stoppers } from './bench-platform';

/** What a benchmark's body gets from `runBenchmark`. */
export interface BenchRun {
  root: string;
  /** A throwaway directory, removed at the end unless the data is kept. */
  dataDir: string;
  /** Everything the body starts; stopped (in reverse order) however the run ends. */
  stoppers: Stoppers;
  /** Aborted on SIGINT or SIGTERM. */
  signal: AbortSignal;
  /** A console line prefixed with the seconds since the start. */
  log: (line: string) => void;
  /** Keeps the data directory whatever the outcome (as BENCH_KEEP_DATA does). */
  keepData: () => void;
}

export interface BenchOutcome {
  /** The report's own fields, written after `benchmark`, `finishedAt` and `machine`. */
  report: Record<string, unknown>;
  /** Each is logged as `PROBLEM: …`; any of them keeps the data and makes the exit code 1. */
  problems: readonly string[];
}

function machine() {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    cpuModel: cpus[0]?.model ?? 'unknown',
    node: process.version,
    loadAverage1m: Number(os.loadavg()[0]?.toFixed(2)),
  };
}

async function run(name: string, body: (run: BenchRun) => Promise<BenchOutcome>): Promise<number> {
  const started = Date.now();
  const log = (line: string) =>
    console.log(`[bench +${((Date.now() - started) / 1000).toFixed(1)} s] ${line}`);
  const root = repositoryRoot();
  const controller = new AbortController();
  const signal = controller.signal;
  const onSignal = (received: NodeJS.Signals) => {
    if (signal.aborted) return;
    log(`${received}: stopping`);
    controller.abort(new Error(`interrupted by ${received}`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const machineBefore = machine();
  log(
    `${machineBefore.cpus} × ${machineBefore.cpuModel}, Node ${machineBefore.node}, load average ${machineBefore.loadAverage1m}`,
  );
  const stoppers = new Stoppers();
  const dataDir = makeDataDir();
  let keepData = process.env['BENCH_KEEP_DATA'] !== undefined;
  try {
    const outcome = await body({
      root,
      dataDir,
      stoppers,
      signal,
      log,
      keepData: () => {
        keepData = true;
      },
    });
    const outputFile = path.join(root, '.data', 'bench', `${name}.json`);
    mkdirSync(path.dirname(outputFile), { recursive: true });
    const report = {
      benchmark: name,
      finishedAt: new Date().toISOString(),
      machine: { ...machineBefore, loadAverage1mAfter: machine().loadAverage1m },
      ...outcome.report,
    };
    writeFileSync(outputFile, `${JSON.stringify(report, null, 2)}\n`);
    console.log(`\nFigures written to ${outputFile}`);
    if (outcome.problems.length > 0) {
      keepData = true;
      for (const problem of outcome.problems) log(`PROBLEM: ${problem}`);
      return 1;
    }
    return 0;
  } catch (error) {
    if (!signal.aborted) keepData = true;
    throw error;
  } finally {
    log('stopping everything this benchmark started');
    await stoppers.stopAll(log);
    if (keepData) log(`data and logs kept in ${dataDir}`);
    else rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * Runs a benchmark as `npm run bench:*` does, then exits the process: logs the machine, gives the
 * body a throwaway data directory, writes `.data/bench/<name>.json` from its outcome, stops
 * everything the body started, and removes the data directory unless BENCH_KEEP_DATA is set, the
 * body asked to keep it, there were problems, or the body failed (other than by SIGINT/SIGTERM).
 * Exit code 0, or 1 on problems or failure.
 */
export function runBenchmark(name: string, body: (run: BenchRun) => Promise<BenchOutcome>): void {
  run(name, body).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(`[bench] failed: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(1);
    },
  );
}
