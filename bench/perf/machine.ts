import { execFileSync } from 'node:child_process';
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
