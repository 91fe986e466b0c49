import type { RankedRow } from './ranking.js';

/**
 * Rankings of recent queries (ids and scores, no text), dropped whole when the index's write generation moves on:
 * ranking is the costly part of a full-text search (bm25 of every match), and a repeated query over an unchanged
 * index ranks the same. Least recently used entries go first beyond `capacity`.
 */
export class RankingCache {
  private readonly entries = new Map<string, readonly RankedRow[]>();
  private generation = '';

  constructor(readonly capacity: number) {}

  get(key: string, generation: string): readonly RankedRow[] | undefined {
    if (this.capacity === 0) return undefined;
    if (generation !== this.generation) {
      this.entries.clear();
      this.generation = generation;
      return undefined;
    }
    const rows = this.entries.get(key);
    if (rows) {
      this.entries.delete(key);
      this.entries.set(key, rows);
    }
    return rows;
  }

  /** Keeps rows ranked at the generation of the last get(): a search reads the generation before it ranks. */
  set(key: string, rows: readonly RankedRow[]): void {
    if (this.capacity === 0) return;
    if (this.entries.size >= this.capacity) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, rows);
  }
}
