import { Request, type IRequestManager, type RequestQueueOperationInfo, type Source } from '@crawlee/core';
import type { FrontierEntry, FrontierStore } from '../storage/index.js';

/** How long a lease lasts; a process holding one past this is presumed dead by other workers. */
const LEASE_MS = 15 * 60_000;

export interface FrontierQueueOptions {
  store: FrontierStore;
  runId: string;
  owner: string;
  /** Requests leased from the database at a time. */
  batch: number;
  /** How many more page requests may start now (the page budget left minus requests in flight); Infinity for none. */
  budgetLeft: (inFlight: number) => number;
  /**
   * The longest a request can be in flight (crawlee's request handler timeout plus its error handling); one handed out
   * longer ago whose outcome never came is presumed lost: it leaves the requests in flight and is queued again.
   */
  maxInFlightMs?: number;
  /** Told of each request presumed lost (for the crawl's log). */
  onLost?: (url: string, inFlightMs: number) => void;
  /**
   * A frontier shared with other crawler processes: leases last `leaseMs` and are renewed while held, leases that ran
   * out are taken over, an empty queue is looked at again while other workers hold leases (their pages may link to
   * more), and `onRefill` is called after each lease (the session refreshes the run's page count across workers).
   */
  shared?: {
    leaseMs: number;
    /** The run's page budget, reserved against in the database as requests are leased (across all workers). */
    maxPages?: number;
    onRefill?: () => Promise<void>;
    /** Settles a leased URL without fetching it (its page was stored this run by a worker that died); true when it did. */
    settle?: (url: string, depth: number) => Promise<boolean>;
  };
}

/** How often a worker of a shared frontier looks for new work while other workers still hold leases. */
const SHARED_POLL_MS = 250;

function depthOf(request: Request): number {
  const depth: unknown = request.userData['depth'];
  return typeof depth === 'number' ? depth : 0;
}

function requestFor(entry: FrontierEntry): Request {
  return new Request({ url: entry.url, uniqueKey: entry.url, userData: { depth: entry.depth } });
}

/**
 * Crawlee's request manager, backed by the crawl frontier in the database: requests are leased from crawl_frontier
 * in small batches, retries stay in memory with their retry state, and a request is done in the database only when
 * the crawl session has recorded its outcome (CrawlSession calls FrontierStore.finish). Hands out a new request only
 * while the page budget allows, so max_pages is never overshot by requests in flight.
 */
export class FrontierQueue implements IRequestManager {
  private readonly buffer: Request[] = [];
  private readonly retries: Request[] = [];
  /** Requests handed out and not yet handled or reclaimed, with when they were handed out. */
  private readonly inFlight = new Map<string, number>();
  private drained = false;
  /** Counts adds that queued something: a lease that began before the latest add cannot say the frontier is drained. */
  private addsSeen = 0;
  private refilling: Promise<void> | null = null;
  private handled = 0;
  private total = 0;
  /** Set when the run stops: nothing new is handed out. */
  private closed = false;
  private drainedAt = 0;
  private outstandingAt = 0;
  private renewTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: FrontierQueueOptions) {
    const shared = options.shared;
    if (shared) {
      // Renewed three times per lease, so one slow database round does not cost a live worker its leases. Only the
      // leases of requests this queue holds: one whose request is gone runs out and is taken over.
      this.renewTimer = setInterval(
        () => void options.store.renew(options.runId, options.owner, shared.leaseMs, this.heldUrls()).catch(() => {}),
        Math.max(100, shared.leaseMs / 3),
      );
      this.renewTimer.unref();
    }
  }

  private get leaseMs(): number {
    return this.options.shared?.leaseMs ?? LEASE_MS;
  }

  /** Queues new entries in the database (entries already in the frontier are ignored). */
  async add(entries: readonly FrontierEntry[]): Promise<number> {
    const added = await this.options.store.add(this.options.runId, entries);
    if (added > 0) {
      this.addsSeen++;
      this.drained = false;
      this.total += added;
    }
    return added;
  }

  get inFlightCount(): number {
    return this.inFlight.size;
  }

  /** Every request whose lease this queue holds: leased and waiting, to retry, or in flight. */
  private heldUrls(): string[] {
    return [...this.buffer.map((r) => r.uniqueKey), ...this.retries.map((r) => r.uniqueKey), ...this.inFlight.keys()];
  }

  /** Requests in flight past maxInFlightMs are presumed lost: out of the requests in flight, queued again. */
  private async requeueLost(): Promise<void> {
    const limit = this.options.maxInFlightMs;
    if (limit === undefined) return;
    const now = Date.now();
    const lost = [...this.inFlight].filter(([, since]) => now - since > limit);
    if (lost.length === 0) return;
    for (const [url, since] of lost) {
      this.inFlight.delete(url);
      this.options.onLost?.(url, now - since);
    }
    await this.options.store.release(this.options.runId, lost.map(([url]) => url));
    this.drained = false;
  }

  private budgetAllows(): boolean {
    return !this.closed && this.options.budgetLeft(this.inFlight.size) > 0;
  }

  private async refill(): Promise<void> {
    await this.requeueLost();
    if (this.drained && this.options.shared && Date.now() - this.drainedAt >= SHARED_POLL_MS) this.drained = false;
    if (this.buffer.length > 0 || this.drained || this.closed) return;
    this.refilling ??= (async () => {
      try {
        const addsBefore = this.addsSeen;
        const shared = this.options.shared;
        const leased = await this.options.store.lease(this.options.runId, this.options.owner, this.options.batch, this.leaseMs, {
          reclaimExpired: shared !== undefined,
          ...(shared?.maxPages !== undefined ? { maxPages: shared.maxPages } : {}),
        });
        // Empty, unless URLs were queued while the lease was on its way (its query ran before they were): those would
        // stay queued in the database while the queue called itself finished.
        if (leased.length === 0 && this.addsSeen === addsBefore) {
          this.drained = true;
          this.drainedAt = Date.now();
        }
        for (const entry of leased) this.buffer.push(requestFor(entry));
        await this.options.shared?.onRefill?.();
      } finally {
        this.refilling = null;
      }
    })();
    await this.refilling;
  }

  async fetchNextRequest<T extends Record<string, unknown> = Record<string, unknown>>(): Promise<Request<T> | null> {
    if (!this.budgetAllows()) return null;
    let request = this.retries.shift();
    while (!request) {
      await this.refill();
      if (!this.budgetAllows()) return null;
      request = this.buffer.shift();
      if (!request) return null;
      const settle = this.options.shared?.settle;
      const taken: Request = request;
      try {
        if (settle && (await settle(taken.uniqueKey, depthOf(taken)))) request = undefined;
      } catch (err) {
        // Kept, with its lease: crawlee asks again, and gets this request.
        this.buffer.unshift(taken);
        throw err;
      }
    }
    this.inFlight.set(request.uniqueKey, Date.now());
    return request as unknown as Request<T>;
  }

  async isEmpty(): Promise<boolean> {
    if (!this.budgetAllows()) return true;
    if (this.retries.length > 0 || this.buffer.length > 0) return false;
    await this.refill();
    return this.buffer.length === 0;
  }

  async isFinished(): Promise<boolean> {
    await this.requeueLost();
    if (this.inFlight.size > 0) return false;
    if (this.closed || this.options.budgetLeft(0) <= 0) return true;
    if (!(await this.isEmpty())) return false;
    // Shared: done only when no other worker holds a live lease (its page may link to more) and none ran out.
    if (this.options.shared) {
      if (Date.now() - this.outstandingAt < SHARED_POLL_MS) return false;
      this.outstandingAt = Date.now();
      return (await this.options.store.outstanding(this.options.runId, this.options.owner)) === 0;
    }
    return true;
  }

  /** Whether the page budget (not an empty queue) is what ended the run. */
  budgetSpent(): boolean {
    return this.options.budgetLeft(0) <= 0;
  }

  async markRequestHandled(request: Request): Promise<RequestQueueOperationInfo | null> {
    this.inFlight.delete(request.uniqueKey);
    this.handled++;
    return null;
  }

  async reclaimRequest(request: Request): Promise<RequestQueueOperationInfo | null> {
    this.inFlight.delete(request.uniqueKey);
    this.retries.push(request);
    return null;
  }

  /** Stops handing out requests and puts every leased request that has not started back in the queue. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.renewTimer);
    await this.refilling;
    const unstarted = [...this.buffer.splice(0), ...this.retries.splice(0)].map((r) => r.uniqueKey);
    if (unstarted.length > 0) await this.options.store.release(this.options.runId, unstarted);
  }

  async handledCount(): Promise<number> {
    return this.handled;
  }

  getTotalCount(): number {
    return this.total;
  }

  getPendingCount(): number {
    return this.buffer.length + this.retries.length + this.inFlight.size;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Request> {
    for (;;) {
      const request = await this.fetchNextRequest();
      if (!request) return;
      yield request;
    }
  }

  async addRequest(requestLike: Source | string): Promise<RequestQueueOperationInfo> {
    const url = typeof requestLike === 'string' ? requestLike : (requestLike.url ?? '');
    const userData = typeof requestLike === 'string' ? undefined : (requestLike.userData as Record<string, unknown> | undefined);
    const depth = typeof userData?.['depth'] === 'number' ? userData['depth'] : 0;
    const added = await this.add([{ url, depth }]);
    return { requestId: url, uniqueKey: url, wasAlreadyPresent: added === 0, wasAlreadyHandled: false, forefront: false };
  }

  async addRequestsBatched(requests: Parameters<IRequestManager['addRequestsBatched']>[0]): Promise<Awaited<ReturnType<IRequestManager['addRequestsBatched']>>> {
    const processed = [];
    for await (const item of requests as AsyncIterable<Source | string> | Iterable<Source | string>) {
      const info = await this.addRequest(item);
      processed.push({ uniqueKey: info.uniqueKey, requestId: info.requestId, wasAlreadyPresent: info.wasAlreadyPresent, wasAlreadyHandled: false });
    }
    return { addedRequests: processed, waitForAllRequestsToBeAdded: Promise.resolve([]) };
  }
}
