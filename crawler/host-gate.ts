import { setTimeout as sleep } from 'node:timers/promises';

interface HostState {
  active: number;
  /** Earliest time the next request to this host may start. */
  nextStartAt: number;
  waiters: Array<() => void>;
}

/**
 * Politeness per host: at most `perHostConcurrency` requests in flight to one host, and request starts to the same
 * host spaced at least `delayMs` apart (0 = no spacing).
 */
export class HostGate {
  private readonly hosts = new Map<string, HostState>();

  constructor(
    private readonly perHostConcurrency: number,
    private readonly delayMs: number,
  ) {}

  private state(host: string): HostState {
    let state = this.hosts.get(host);
    if (!state) {
      state = { active: 0, nextStartAt: 0, waiters: [] };
      this.hosts.set(host, state);
    }
    return state;
  }

  /** Waits for a slot on `host`; the returned function releases it (calling it twice is harmless). */
  async acquire(host: string, signal?: AbortSignal): Promise<() => void> {
    const state = this.state(host);
    while (state.active >= this.perHostConcurrency) {
      await new Promise<void>((resolve) => state.waiters.push(resolve));
    }
    state.active++;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      state.active--;
      state.waiters.shift()?.();
    };
    if (this.delayMs > 0) {
      const now = Date.now();
      const startAt = Math.max(now, state.nextStartAt);
      state.nextStartAt = startAt + this.delayMs;
      if (startAt > now) {
        try {
          await sleep(startAt - now, undefined, { signal });
        } catch (err) {
          release();
          throw err;
        }
      }
    }
    return release;
  }
}
