import { setTimeout as sleep } from 'node:timers/promises';

interface HostState {
  active: number;
  /** Spacing between two request starts to this host (0 = none). */
  delayMs: number;
  /** Also keep `delayMs` between the end of one request and the start of the next (robots.txt Crawl-delay). */
  delayAfterFinish: boolean;
  /** Earliest time the next request to this host may start. */
  nextStartAt: number;
  /** When the last request to this host really started (a late timer must not bring the next one closer). */
  lastStartAt: number;
  /** No request to this host starts before this time (set after a 429 / 503 with Retry-After). */
  pausedUntil: number;
  waiters: Array<() => void>;
}

/** Per-host politeness kept with other crawler processes (storage/host-slots.ts, bound to this process). */
export interface SharedPoliteness {
  reserve(host: string, delayMs: number): Promise<number>;
  /** Takes one of `limit` concurrency slots of the host across processes; resolves to its release. */
  hold?(host: string, limit: number, signal?: AbortSignal): Promise<() => Promise<void>>;
}

/**
 * Politeness per host: at most `perHostConcurrency` requests in flight to one host, request starts to the same
 * host spaced at least `delayMs` apart (0 = no spacing; a host may be given a longer spacing by its robots.txt), and
 * no starts at all while the host is paused.
 */
export class HostGate {
  private readonly hosts = new Map<string, HostState>();

  constructor(
    private readonly perHostConcurrency: number,
    private readonly delayMs: number,
    /**
     * Politeness shared with other crawler processes (crawler.shared_frontier): after the local gate lets a request
     * start, it takes one of the host's `perHostConcurrency` slots across all workers (held until the request ends),
     * then books a start slot with the others and waits for it, so the host sees one concurrency limit and one
     * spacing however many workers crawl it.
     */
    private readonly shared?: SharedPoliteness,
  ) {}

  private state(host: string): HostState {
    let state = this.hosts.get(host);
    if (!state) {
      state = { active: 0, delayMs: this.delayMs, delayAfterFinish: false, nextStartAt: 0, lastStartAt: Number.NEGATIVE_INFINITY, pausedUntil: 0, waiters: [] };
      this.hosts.set(host, state);
    }
    return state;
  }

  /**
   * A robots.txt Crawl-delay: requests to `host` start at least `delayMs` after the previous one started and after it
   * finished (so the host sees them that far apart however long each takes); a longer spacing already set is kept.
   */
  setHostDelay(host: string, delayMs: number): void {
    const state = this.state(host);
    state.delayMs = Math.max(state.delayMs, delayMs);
    state.delayAfterFinish = true;
  }

  hostDelay(host: string): number {
    return this.hosts.get(host)?.delayMs ?? this.delayMs;
  }

  /** Holds back every request start to `host` for `ms` from now (a longer pause already set is kept). */
  pause(host: string, ms: number): void {
    const state = this.state(host);
    state.pausedUntil = Math.max(state.pausedUntil, Date.now() + ms);
  }

  /** Waits for a slot on `host`; the returned function releases it (calling it twice is harmless). */
  async acquire(host: string, signal?: AbortSignal): Promise<() => void> {
    const state = this.state(host);
    while (state.active >= this.perHostConcurrency) {
      await new Promise<void>((resolve) => state.waiters.push(resolve));
    }
    state.active++;
    let released = false;
    let releaseShared: (() => Promise<void>) | undefined;
    const release = () => {
      if (released) return;
      released = true;
      void releaseShared?.().catch(() => {});
      state.active--;
      if (state.delayAfterFinish) state.nextStartAt = Math.max(state.nextStartAt, Date.now() + state.delayMs);
      state.waiters.shift()?.();
    };
    try {
      if (this.shared?.hold) releaseShared = await this.shared.hold(host, this.perHostConcurrency, signal);
      await this.waitForStart(state, signal);
      if (this.shared && state.delayMs > 0) {
        const waitMs = await this.shared.reserve(host, state.delayMs);
        if (waitMs > 0) await sleep(waitMs, undefined, { signal });
        state.lastStartAt = Date.now();
      }
    } catch (err) {
      release();
      throw err;
    }
    return release;
  }

  private async waitForStart(state: HostState, signal: AbortSignal | undefined): Promise<void> {
    for (;;) {
      const now = Date.now();
      const startAt = Math.max(now, state.nextStartAt, state.pausedUntil, state.lastStartAt + state.delayMs);
      if (state.delayMs > 0) state.nextStartAt = startAt + state.delayMs;
      if (startAt <= now) {
        state.lastStartAt = now;
        return;
      }
      await sleep(startAt - now, undefined, { signal });
      // Started only if no pause came in while this request slept (another request got a 429) and the request before
      // it did not start late (a busy event loop fires timers late; the host must still see the spacing).
      const woke = Date.now();
      if (state.pausedUntil <= woke && woke >= state.lastStartAt + state.delayMs) {
        state.lastStartAt = woke;
        return;
      }
    }
  }
}
