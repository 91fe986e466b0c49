import { NotaryError } from '../core/index.js';

/** A model that scores (query, passage) pairs of any queries in one call (OnnxReranker.scorePairs of a cross-encoder). */
export interface PairScorer {
  scorePairs(pairs: ReadonlyArray<{ query: string; passage: string }>): Promise<number[]>;
}

export interface PairBatcherOptions {
  /** Longest wait of a first waiting request for others to join its run (milliseconds, 0..50). */
  maxWaitMs: number;
  /** Pairs per model call: a run starts as soon as this many wait; a request is never split. */
  maxPairs: number;
}

interface Waiting {
  query: string;
  passages: readonly string[];
  resolve: (scores: number[]) => void;
  reject: (error: unknown) => void;
  settled: boolean;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

/**
 * Puts the (query, passage) pairs of concurrent searches into one model call: a request waits at most `maxWaitMs`
 * for others (none when `maxPairs` pairs already wait), each caller gets its own scores back in order, a failing call
 * rejects every request in it with the error, and a caller that gives up (its AbortSignal) leaves the others alone.
 */
export class PairBatcher {
  private waiting: Waiting[] = [];
  private waitingPairs = 0;
  private timer: NodeJS.Timeout | null = null;
  private readonly options: PairBatcherOptions;

  /** Model calls made and pairs sent, for measurements. */
  readonly stats = { calls: 0, pairs: 0, requests: 0 };

  constructor(
    private readonly model: PairScorer,
    options: PairBatcherOptions,
  ) {
    if (!(options.maxWaitMs >= 0 && options.maxWaitMs <= 50)) throw new RangeError(`maxWaitMs must be within 0..50, got ${options.maxWaitMs}`);
    this.options = { maxWaitMs: options.maxWaitMs, maxPairs: Math.max(1, Math.floor(options.maxPairs)) };
  }

  /** Scores of `passages` against `query`, in order; rejected with the signal's reason when it aborts first. */
  score(query: string, passages: readonly string[], signal?: AbortSignal): Promise<number[]> {
    if (passages.length === 0) return Promise.resolve([]);
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise<number[]>((resolve, reject) => {
      const entry: Waiting = { query, passages, resolve, reject, settled: false, signal, onAbort: undefined };
      if (signal) {
        entry.onAbort = () => {
          if (entry.settled) return;
          const at = this.waiting.indexOf(entry);
          if (at >= 0) {
            this.waiting.splice(at, 1);
            this.waitingPairs -= entry.passages.length;
          }
          this.settle(entry, () => reject(abortReason(signal)));
        };
        signal.addEventListener('abort', entry.onAbort, { once: true });
      }
      this.waiting.push(entry);
      this.waitingPairs += passages.length;
      if (this.waitingPairs >= this.options.maxPairs || this.options.maxWaitMs === 0) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.options.maxWaitMs);
    });
  }

  private settle(entry: Waiting, finish: () => void): void {
    if (entry.settled) return;
    entry.settled = true;
    if (entry.signal && entry.onAbort) entry.signal.removeEventListener('abort', entry.onAbort);
    finish();
  }

  /** Sends the waiting requests in calls of up to maxPairs pairs (whole requests; a larger one goes alone). */
  private flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    while (this.waiting.length > 0) {
      const batch: Waiting[] = [];
      let pairs = 0;
      while (this.waiting.length > 0) {
        const next = this.waiting[0] as Waiting;
        if (batch.length > 0 && pairs + next.passages.length > this.options.maxPairs) break;
        batch.push(next);
        pairs += next.passages.length;
        this.waiting.shift();
      }
      this.waitingPairs -= pairs;
      void this.run(batch);
    }
  }

  private async run(batch: readonly Waiting[]): Promise<void> {
    const pairs = batch.flatMap((entry) => entry.passages.map((passage) => ({ query: entry.query, passage })));
    this.stats.calls++;
    this.stats.pairs += pairs.length;
    this.stats.requests += batch.length;
    let scores: number[];
    try {
      scores = await this.model.scorePairs(pairs);
      if (scores.length !== pairs.length) throw new NotaryError('internal_error', `the model returned ${scores.length} scores for ${pairs.length} pairs`);
    } catch (err) {
      for (const entry of batch) this.settle(entry, () => entry.reject(err));
      return;
    }
    let offset = 0;
    for (const entry of batch) {
      const mine = scores.slice(offset, offset + entry.passages.length);
      offset += entry.passages.length;
      this.settle(entry, () => entry.resolve(mine));
    }
  }
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new NotaryError('service_unavailable', 'the search was cancelled');
}
