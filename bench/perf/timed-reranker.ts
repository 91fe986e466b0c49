import { performance } from 'node:perf_hooks';
import type { Reranker, RerankerInfo } from '../../reranker/reranker.js';

export interface RerankCall {
  query: string;
  passages: readonly string[];
  ms: number;
}

/**
 * Passes score() through to a real reranker and records each call's inputs and wall time, so the benchmark can
 * re-score the very same candidate lists and tell reranker time from the rest of a search.
 */
export class TimedReranker implements Reranker {
  readonly calls: RerankCall[] = [];

  constructor(private readonly inner: Reranker) {}

  get info(): RerankerInfo {
    return this.inner.info;
  }

  async score(query: string, passages: readonly string[]): Promise<number[]> {
    const started = performance.now();
    const scores = await this.inner.score(query, passages);
    this.calls.push({ query, passages: [...passages], ms: performance.now() - started });
    return scores;
  }

  /** Forgets the recorded calls (e.g. after warm-up). */
  reset(): void {
    this.calls.length = 0;
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
