import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time (user + system) used by this process and everything it started, per process with a
 * label (service name, `postgres (sessions)`, `nats-server`…), read from /proc, and the machine's
 * busy time. Taken before and after a load run, the difference says which process spent the
 * machine's time on the requests. Linux only: where /proc is missing, snapshots are null.
 */
export interface CpuSnapshot {
  /** CPU ms so far of each process alive at the snapshot, by pid. */
  processes: Map<number, { label: string; cpuMs: number }>;
  /** Busy CPU ms of the whole machine since boot, all processes together (null: unknown). */
  machineBusyMs: number | null;
}

/** The label of what every other process of the machine used (busy CPU time minus ours). */
export const OTHER_PROCESSES = '(other processes on the machine)';

export interface ProcStat {
  pid: number;
  ppid: number;
  comm: string;
  cpuTicks: number;
}

function clockTicksPerSecond(): number {
  try {
    const value = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isFinite(value) && value > 0 ? value : 100;
  } catch {
    return 100;
  }
}

/** Fields of /proc/<pid>/stat (see proc(5)): the comm is in parentheses and may hold spaces. */
function readStat(pid: number): ProcStat | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null; // exited meanwhile
  }
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  const fields = text.slice(close + 2).split(' ');
  // After the comm: state(3) ppid(4) … utime(14) stime(15), here 0-based from state.
  const ppid = Number(fields[1]);
  const cpuTicks = Number(fields[11]) + Number(fields[12]);
  if (!Number.isFinite(ppid) || !Number.isFinite(cpuTicks)) return null;
  return { pid, ppid, comm: text.slice(open + 1, close), cpuTicks };
}

/** Busy ticks of all CPUs since boot: the first line of /proc/stat without idle and iowait. */
function machineBusyTicks(): number | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
    const [, user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).map(Number);
    const busy = [user, nice, system, irq, softirq, steal].reduce(
      (sum: number, value) => sum + (value ?? 0),
      0,
    );
    return Number.isFinite(busy) ? busy : null;
  } catch {
    return null;
  }
}

/**
 * A PostgreSQL process by role (its title, see postgres(1) "update_process_title"): sessions
 * serving clients, autovacuum, and the rest (WAL writer, checkpointer, background writer).
 */
function postgresRole(pid: number): string {
  let title = '';
  try {
    title = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return 'postgres';
  }
  if (!title.startsWith('postgres: ')) return 'postgres (postmaster)';
  if (title.includes('autovacuum')) return 'postgres (autovacuum)';
  if (/\d+\.\d+\.\d+\.\d+\(\d+\)/.test(title)) return 'postgres (sessions)';
  return 'postgres (wal, checkpoints)';
}

export class ProcessCpu {
  private readonly ticksPerSecond = clockTicksPerSecond();
  private readonly labels = new Map<number, string>();

  constructor(selfLabel: string) {
    this.labels.set(process.pid, selfLabel);
  }

  /** Names a process this benchmark started (others are labelled by their command name). */
  label(pid: number | undefined, label: string): void {
    if (pid !== undefined) this.labels.set(pid, label);
  }

  /** This process and each of its descendants, with their labels (null without /proc). */
  processes(): Array<{ stat: ProcStat; label: string }> | null {
    let entries: string[];
    try {
      entries = readdirSync('/proc');
    } catch {
      return null;
    }
    const stats = new Map<number, ProcStat>();
    for (const entry of entries) {
      if (!/^\d+$/.test(entry)) continue;
      const stat = readStat(Number(entry));
      if (stat) stats.set(stat.pid, stat);
    }
    if (!stats.has(process.pid)) return null;
    const children = new Map<number, number[]>();
    for (const stat of stats.values()) {
      children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), stat.pid]);
    }
    const found: Array<{ stat: ProcStat; label: string }> = [];
    // Depth-first from this process; a grandchild inherits its parent's label unless it has its
    // own (a service's helper processes count as the service; postgres backends as postgres).
    const stack: Array<{ pid: number; inherited: string | undefined }> = [
      { pid: process.pid, inherited: undefined },
    ];
    for (let next = stack.pop(); next; next = stack.pop()) {
      const stat = stats.get(next.pid);
      if (!stat) continue;
      const label =
        this.labels.get(stat.pid) ??
        (stat.comm === 'postgres' ? postgresRole(stat.pid) : undefined) ??
        (stat.comm === 'nats-server' ? stat.comm : next.inherited) ??
        stat.comm;
      found.push({ stat, label });
      for (const child of children.get(stat.pid) ?? []) {
        stack.push({ pid: child, inherited: stat.pid === process.pid ? undefined : label });
      }
    }
    return found;
  }

  /** CPU milliseconds so far of this process and each of its descendants. */
  snapshot(): CpuSnapshot | null {
    const found = this.processes();
    if (!found) return null;
    const processes: CpuSnapshot['processes'] = new Map();
    for (const { stat, label } of found) {
      processes.set(stat.pid, { label, cpuMs: (stat.cpuTicks * 1000) / this.ticksPerSecond });
    }
    const busy = machineBusyTicks();
    return {
      processes,
      machineBusyMs: busy === null ? null : (busy * 1000) / this.ticksPerSecond,
    };
  }
}

/**
 * CPU milliseconds per label spent between two snapshots (labels that used none are left out),
 * and under OTHER_PROCESSES what the rest of the machine used meanwhile. Counted per process, so
 * that a process that exits (an idle pool connection's backend) takes nothing away; what it used
 * between its last snapshot and its exit is not seen.
 */
export function cpuBetween(
  before: CpuSnapshot | null,
  after: CpuSnapshot | null,
): Record<string, number> | null {
  if (!before || !after) return null;
  const spent: Record<string, number> = {};
  let ours = 0;
  for (const [pid, { label, cpuMs }] of after.processes) {
    const delta = cpuMs - (before.processes.get(pid)?.cpuMs ?? 0);
    if (delta <= 0) continue;
    spent[label] = (spent[label] ?? 0) + delta;
    ours += delta;
  }
  if (before.machineBusyMs !== null && after.machineBusyMs !== null) {
    spent[OTHER_PROCESSES] = Math.max(0, after.machineBusyMs - before.machineBusyMs - ours);
  }
  return spent;
}
