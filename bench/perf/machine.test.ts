import { describe, expect, it } from 'vitest';
import { machineBusyMs, processTreeCpuMs } from './machine.js';

/** Spins this thread until it has used `ms` of CPU. */
function spin(ms: number): void {
  const start = process.cpuUsage();
  for (;;) {
    const used = process.cpuUsage(start);
    if ((used.user + used.system) / 1000 >= ms) return;
  }
}

describe.runIf(process.platform === 'linux')('CPU counters (Linux /proc)', () => {
  it("counts this process's CPU in the machine's busy time", () => {
    const machineBefore = machineBusyMs()!;
    const ownBefore = processTreeCpuMs(process.pid)!;
    spin(200);
    const machine = machineBusyMs()! - machineBefore;
    const own = processTreeCpuMs(process.pid)! - ownBefore;
    // /proc counts in ticks of 10 ms; the machine's time holds this process's and any other's.
    expect(own).toBeGreaterThanOrEqual(180);
    expect(machine).toBeGreaterThanOrEqual(own - 20);
  });
});
