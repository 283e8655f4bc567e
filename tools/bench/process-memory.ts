import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';

import type { ProcessCpu } from './process-cpu';

/**
 * The memory of the platform's processes (every service, nats-server, PostgreSQL): resident set
 * (VmRSS of /proc/<pid>/status) and proportional set (Pss of /proc/<pid>/smaps_rollup, which
 * splits shared pages such as PostgreSQL's shared buffers between the processes mapping them, so
 * it sums to what the stack really holds). Per label, as process-cpu.ts names the processes.
 */
export interface MemoryFigures {
  /** MiB by label (processes of one label added up), biggest first. */
  rssMiB: Record<string, number>;
  /** null where smaps_rollup was unreadable for some process. */
  pssMiB: Record<string, number> | null;
  totalRssMiB: number;
  totalPssMiB: number | null;
  processes: number;
}

export interface StackMemoryReport {
  /** After the platform started, before any load. */
  idle: MemoryFigures | null;
  /** The sample of the highest total RSS during the load, and per label its own highest RSS. */
  peak: MemoryFigures | null;
  peakRssMiBByLabel: Record<string, number> | null;
  samples: number;
  sampleIntervalMs: number;
}

const SAMPLE_INTERVAL_MS = 500;

/** The `Key:   1234 kB` line of a /proc file's text, in KiB (null: field missing). */
function kibField(text: string, key: string): number | null {
  const match = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text);
  return match?.[1] === undefined ? null : Number(match[1]);
}

/** A `Key:   1234 kB` line of a /proc file, in KiB (null: file or field unreadable). */
function procKiB(file: string, key: string): number | null {
  try {
    return kibField(readFileSync(file, 'utf8'), key);
  } catch {
    return null;
  }
}

/** procKiB off the event loop (reading smaps_rollup walks the process's page tables). */
async function procKiBAsync(file: string, key: string): Promise<number | null> {
  try {
    return kibField(await readFile(file, 'utf8'), key);
  } catch {
    return null;
  }
}

const mib = (kib: number) => Number((kib / 1024).toFixed(1));

function sorted(entries: Map<string, number>): Record<string, number> {
  return Object.fromEntries(
    [...entries].sort((a, b) => b[1] - a[1]).map(([label, kib]) => [label, mib(kib)]),
  );
}

/** A process of the stack: its pid and label. */
interface StackProcess {
  pid: number;
  label: string;
}

/**
 * The figures of one reading: `rssKiB[i]` and `pssKiB[i]` belong to `stack[i]`; a process whose
 * RSS is null exited meanwhile (or is a kernel thread) and is left out; `pssKiB` null: not read.
 */
function memoryFigures(
  stack: readonly StackProcess[],
  rssKiB: ReadonlyArray<number | null>,
  pssKiB: ReadonlyArray<number | null> | null,
): MemoryFigures {
  const rss = new Map<string, number>();
  const pss = new Map<string, number>();
  let pssComplete = pssKiB !== null;
  let processes = 0;
  stack.forEach(({ label }, index) => {
    const processRss = rssKiB[index] ?? null;
    if (processRss === null) return;
    processes++;
    rss.set(label, (rss.get(label) ?? 0) + processRss);
    const processPss = pssKiB?.[index] ?? null;
    if (processPss === null) pssComplete = false;
    else pss.set(label, (pss.get(label) ?? 0) + processPss);
  });
  const total = (entries: Map<string, number>) =>
    mib([...entries.values()].reduce((sum, kib) => sum + kib, 0));
  return {
    rssMiB: sorted(rss),
    pssMiB: pssComplete ? sorted(pss) : null,
    totalRssMiB: total(rss),
    totalPssMiB: pssComplete ? total(pss) : null,
    processes,
  };
}

const statusFile = ({ pid }: StackProcess) => `/proc/${pid}/status`;
const smapsFile = ({ pid }: StackProcess) => `/proc/${pid}/smaps_rollup`;

/**
 * The stack's memory: an idle reading, then a reading every SAMPLE_INTERVAL_MS during the load,
 * keeping the peaks. The periodic readings run off the event loop (the benchmark's load and its
 * latency clocks share it: synchronous reads of every process's smaps_rollup stalled it for
 * 50–150 ms every sample), and read PSS only for a reading that is a new RSS peak, the only one
 * whose PSS is reported.
 */
export class StackMemory {
  private timer: NodeJS.Timeout | undefined;
  private sampling = false;
  private idle: MemoryFigures | null = null;
  private peak: MemoryFigures | null = null;
  private readonly peakByLabel = new Map<string, number>();
  private samples = 0;

  /** `outside`: labels of processes that are not the stack (the benchmark, bare blocks). */
  constructor(
    private readonly cpu: ProcessCpu,
    private readonly outside: ReadonlySet<string>,
  ) {}

  /** One reading of every stack process now (null without /proc). */
  sample(): MemoryFigures | null {
    const stack = this.stackProcesses();
    if (!stack) return null;
    const rss = stack.map((found) => procKiB(statusFile(found), 'VmRSS'));
    const pss = stack.map((found, index) =>
      rss[index] === null ? null : procKiB(smapsFile(found), 'Pss'),
    );
    return memoryFigures(stack, rss, pss);
  }

  /** Readings recorded so far (the idle one aside). */
  get sampleCount(): number {
    return this.samples;
  }

  /** Takes the idle reading. */
  recordIdle(): MemoryFigures | null {
    this.idle = this.sample();
    return this.idle;
  }

  /** Samples every SAMPLE_INTERVAL_MS until stop(), keeping the peaks. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.sampling) return;
      this.sampling = true;
      void this.sampleInBackground().finally(() => {
        this.sampling = false;
      });
    }, SAMPLE_INTERVAL_MS);
    this.timer.unref();
  }

  stop(): StackMemoryReport {
    clearInterval(this.timer);
    this.timer = undefined;
    const now = this.sample();
    if (now) this.record(now);
    return {
      idle: this.idle,
      peak: this.peak,
      peakRssMiBByLabel:
        this.peakByLabel.size === 0
          ? null
          : Object.fromEntries([...this.peakByLabel].sort((a, b) => b[1] - a[1])),
      samples: this.samples,
      sampleIntervalMs: SAMPLE_INTERVAL_MS,
    };
  }

  private stackProcesses(): StackProcess[] | null {
    const found = this.cpu.processes();
    if (!found) return null;
    return found
      .filter(({ label }) => !this.outside.has(label))
      .map(({ stat, label }) => ({ pid: stat.pid, label }));
  }

  private async sampleInBackground(): Promise<void> {
    const stack = this.stackProcesses();
    if (!stack) return;
    const rss = await Promise.all(stack.map((found) => procKiBAsync(statusFile(found), 'VmRSS')));
    const withoutPss = memoryFigures(stack, rss, null);
    const pss =
      this.peak && withoutPss.totalRssMiB <= this.peak.totalRssMiB
        ? null
        : await Promise.all(
            stack.map((found, index) =>
              rss[index] === null ? Promise.resolve(null) : procKiBAsync(smapsFile(found), 'Pss'),
            ),
          );
    // A reading finishing after stop() is not counted: the report is out.
    if (this.timer === undefined) return;
    this.record(pss === null ? withoutPss : memoryFigures(stack, rss, pss));
  }

  private record(now: MemoryFigures): void {
    this.samples++;
    if (!this.peak || now.totalRssMiB > this.peak.totalRssMiB) this.peak = now;
    for (const [label, value] of Object.entries(now.rssMiB)) {
      this.peakByLabel.set(label, Math.max(this.peakByLabel.get(label) ?? 0, value));
    }
  }
}

/** Lines for the console: per label idle → peak RSS (and PSS), then the totals. */
export function memoryLines(report: StackMemoryReport): string[] {
  const { idle, peak } = report;
  if (!idle && !peak) return ['  memory: (no /proc)'];
  const labels = Object.keys(report.peakRssMiBByLabel ?? peak?.rssMiB ?? idle?.rssMiB ?? {});
  for (const label of Object.keys(idle?.rssMiB ?? {})) {
    if (!labels.includes(label)) labels.push(label);
  }
  const value = (figure: number | undefined) =>
    figure === undefined ? '–'.padStart(7) : figure.toFixed(1).padStart(7);
  const lines = [
    `  ${'process'.padEnd(30)} ${'idle RSS'.padStart(9)} ${'peak RSS'.padStart(9)} ${'idle PSS'.padStart(9)} ${'PSS at peak'.padStart(11)} (MiB)`,
  ];
  for (const label of labels) {
    lines.push(
      `  ${label.padEnd(30)}   ${value(idle?.rssMiB[label])}   ${value(report.peakRssMiBByLabel?.[label])}   ${value(idle?.pssMiB?.[label])}     ${value(peak?.pssMiB?.[label])}`,
    );
  }
  lines.push(
    `  ${`total (${idle?.processes ?? '?'} → ${peak?.processes ?? '?'} processes)`.padEnd(30)}   ${value(idle?.totalRssMiB)}   ${value(peak?.totalRssMiB)}   ${value(idle?.totalPssMiB ?? undefined)}     ${value(peak?.totalPssMiB ?? undefined)}`,
  );
  lines.push(
    `  (RSS counts shared pages in every process mapping them, so its total over-counts; PSS splits them. Peak: the sample of the highest total RSS, ${report.samples} samples every ${report.sampleIntervalMs} ms; per process its own highest RSS)`,
  );
  return lines;
}
