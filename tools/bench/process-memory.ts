import { readFileSync } from 'node:fs';

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

/** A `Key:   1234 kB` line of a /proc file, in KiB (null: file or field unreadable). */
function procKiB(file: string, key: string): number | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  const match = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text);
  return match?.[1] === undefined ? null : Number(match[1]);
}

const mib = (kib: number) => Number((kib / 1024).toFixed(1));

function sorted(entries: Map<string, number>): Record<string, number> {
  return Object.fromEntries(
    [...entries].sort((a, b) => b[1] - a[1]).map(([label, kib]) => [label, mib(kib)]),
  );
}

export class StackMemory {
  private timer: NodeJS.Timeout | undefined;
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
    const found = this.cpu.processes();
    if (!found) return null;
    const rss = new Map<string, number>();
    const pss = new Map<string, number>();
    let pssComplete = true;
    let processes = 0;
    for (const { stat, label } of found) {
      if (this.outside.has(label)) continue;
      const rssKiB = procKiB(`/proc/${stat.pid}/status`, 'VmRSS');
      if (rssKiB === null) continue; // exited meanwhile, or a kernel thread
      processes++;
      rss.set(label, (rss.get(label) ?? 0) + rssKiB);
      const pssKiB = procKiB(`/proc/${stat.pid}/smaps_rollup`, 'Pss');
      if (pssKiB === null) pssComplete = false;
      else pss.set(label, (pss.get(label) ?? 0) + pssKiB);
    }
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

  /** Takes the idle reading. */
  recordIdle(): MemoryFigures | null {
    this.idle = this.sample();
    return this.idle;
  }

  /** Samples every SAMPLE_INTERVAL_MS until stop(), keeping the peaks. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.recordPeak(), SAMPLE_INTERVAL_MS);
    this.timer.unref();
  }

  stop(): StackMemoryReport {
    clearInterval(this.timer);
    this.timer = undefined;
    this.recordPeak();
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

  private recordPeak(): void {
    const now = this.sample();
    if (!now) return;
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
