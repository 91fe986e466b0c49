import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';

export interface MachineInfo {
  os: string;
  cpu: string;
  cores: number;
  memory_gb: number;
  node: string;
}

export function machineInfo(): MachineInfo {
  const cpus = os.cpus();
  return {
    os: `${os.type()} ${os.release()}`,
    cpu: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    memory_gb: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
  };
}

/** HEAD of the checkout at `cwd`, or null outside a git work tree (read only: rev-parse changes nothing). */
export function gitCommit(cwd: string): string | null {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() || null;
  } catch {
    return null;
  }
}

export interface MemorySample {
  rss_mb: number;
  heap_used_mb: number;
  /** Peak resident set size of the process so far. */
  max_rss_mb: number;
}

const MB = 1024 * 1024;

export function memorySample(): MemorySample {
  const usage = process.memoryUsage();
  return {
    rss_mb: Math.round(usage.rss / MB),
    heap_used_mb: Math.round(usage.heapUsed / MB),
    // resourceUsage().maxRSS is in kilobytes.
    max_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
  };
}

export function loadAverage(): [number, number, number] {
  const [one = 0, five = 0, fifteen = 0] = os.loadavg();
  return [one, five, fifteen].map((x) => Math.round(x * 100) / 100) as [number, number, number];
}

/**
 * The sum over `pid` and every process below it of `valueOf(its /proc/<pid> folder, its stat fields after the command
 * name)`; null where /proc cannot tell or `pid` is gone.
 */
function sumOverProcessTree(pid: number, valueOf: (dir: string, fields: string[]) => number): number | null {
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return null;
  }
  const parentOf = new Map<number, number>();
  const valueAt = new Map<number, number>();
  for (const entry of entries) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command name may hold spaces and parentheses: the fields start after its last ')'.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parentOf.set(Number(entry), Number(fields[1]));
      valueAt.set(Number(entry), valueOf(`/proc/${entry}`, fields));
    } catch {
      continue; // exited meanwhile
    }
  }
  if (!valueAt.has(pid)) return null;
  let total = 0;
  for (const [candidate, value] of valueAt) {
    for (let p: number | undefined = candidate; p !== undefined && p > 0; p = parentOf.get(p)) {
      if (p === pid) {
        total += value;
        break;
      }
    }
  }
  return total;
}

/**
 * CPU time (user + system, ms) used so far by process `pid` and every process below it (Linux /proc; null elsewhere):
 * what a server's work costs, counted the same on a busy machine as on a quiet one, unlike its requests per second.
 * Threads are counted with their process; processes that already exited are not.
 */
export function processTreeCpuMs(pid: number): number | null {
  const ticksPerSecond = 100; // USER_HZ: 100 on every Linux architecture Node supports
  return sumOverProcessTree(pid, (_dir, fields) => ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond);
}

/** Resident memory (MB) of `pid` and every process below it, from /proc; null where /proc cannot tell. */
export function processTreeRssMb(pid: number): number | null {
  const total = sumOverProcessTree(pid, (dir) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`${dir}/status`, 'utf8'))?.[1] ?? 0) / 1024);
  return total === null ? null : Math.round(total);
}

/**
 * CPU time (ms) every process of the machine has used so far, all cores together (Linux /proc/stat: everything but
 * idle and I/O wait; null elsewhere): over a timed load, what a search cost the server, the load generator and a
 * search engine running beside them in a process of its own (and anything else running, so compare quiet runs).
 */
export function machineBusyMs(): number | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
    const ticks = line.trim().split(/\s+/).slice(1).map(Number);
    if (line.split(/\s+/)[0] !== 'cpu' || ticks.length < 5 || ticks.some((t) => !Number.isFinite(t))) return null;
    const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = ticks;
    return ((user + nice + system + irq + softirq + steal) * 1000) / 100; // USER_HZ ticks
  } catch {
    return null;
  }
}
