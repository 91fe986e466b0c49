import type { PostingsSnapshot } from './postings-worker.js';

/** bm25's constants in FTS5 (fts5_aux.c). */
const K1 = 1.2;
const B = 0.75;

/** Rows that pass a filter: each group is a list of facet tokens a row must hold one of; `without` it must not hold. */
export interface FacetFilter {
  anyOf: readonly (readonly string[])[];
  without: readonly string[];
  /** Only rows with these rowids (a collection filter's rows); absent: any. */
  rowids?: { has(rowid: number): boolean };
}

/** One ranked row: its rowid, page id and bm25 score (higher is better). */
export interface MemoryRankedRow {
  id: number;
  page_id: number;
  score: number;
}

/** A phrase's matches: rows in ascending order and the weighted count of its instances in each (bm25's f). */
interface PhraseMatches {
  rows: Int32Array;
  freqs: Float64Array;
}

const NO_MATCHES: PhraseMatches = { rows: new Int32Array(0), freqs: new Float64Array(0) };

/**
 * One FTS5 table's index held in memory, as of one write generation, with bm25() computed as FTS5 computes it
 * (fts5_aux.c: the same statistics, the same operations in the same order), so a ranking equals the SQL query's:
 * `-bm25(table, weights...)` over rows matching any of the phrases in the text columns, filtered by facet tokens,
 * ordered by score, then rowid.
 */
export class Postings {
  private readonly termIds: Map<string, number>;
  private readonly facetIds: Map<string, number>;
  private readonly avgdl: number;
  /** Rows holding a group of common facet tokens, by the group (see rowsHolding). */
  private readonly facetMarks = new Map<string, Uint8Array>();

  constructor(readonly snapshot: PostingsSnapshot) {
    this.termIds = new Map(snapshot.terms.map((term, i) => [term, i]));
    this.facetIds = new Map(snapshot.facetTokens.map((token, i) => [token, i]));
    this.avgdl = snapshot.tokenTotal / snapshot.rowCount;
  }

  get generation(): string {
    return this.snapshot.generation;
  }

  get rows(): number {
    return this.snapshot.rowids.length;
  }

  /** Bytes held by the typed arrays (strings and maps aside). */
  get bytes(): number {
    const s = this.snapshot;
    return [s.rowids, s.pageIds, s.sizes, s.termEntries, s.entryRows, s.entryInstances, s.instanceColumns, s.instanceOffsets, s.facetEntries, s.facetRows].reduce(
      (sum, a) => sum + a.byteLength,
      0,
    );
  }

  /**
   * Whether rank() gives these phrases SQL's ranking: not when a phrase holds a facet token. Where a row holds that
   * token in its facets, FTS5 (SQLite 3.54) scores the row 0 in a MATCH with a column filter, AND and NOT, though the
   * row has other words of the query; SQL ranks such queries, as it always has.
   */
  ranks(phrases: readonly (readonly string[])[]): boolean {
    return !phrases.some((tokens) => tokens.some((token) => this.facetIds.has(token)));
  }

  /**
   * The best `want` matching rows, best first (ties by rowid). `phrases`: the query's phrases, each as its tokens, in
   * the order of the MATCH expression; `weights`: bm25's weight of each column by index.
   */
  rank(phrases: readonly (readonly string[])[], weights: readonly number[], filter: FacetFilter, want: number): MemoryRankedRow[] {
    const s = this.snapshot;
    const matches = phrases.map((tokens) => this.phraseMatches(tokens, weights));
    const idf = matches.map(({ rows }) => {
      const value = Math.log((s.rowCount - rows.length + 0.5) / (rows.length + 0.5));
      return value <= 0.0 ? 1e-6 : value;
    });
    const required = filter.anyOf.map((tokens) => this.rowsHolding(tokens));
    const excluded = filter.without.length > 0 ? this.rowsHolding(filter.without) : null;
    // The best rows so far in a heap whose root is the worst of them (lowest score; of equal scores, highest row).
    const heap = new TopRows(Math.max(0, Math.floor(want)));
    const cursors = new Int32Array(matches.length);
    for (;;) {
      // The lowest row any phrase has next: rows come out in ascending order, each once.
      let row = Number.MAX_SAFE_INTEGER;
      for (let i = 0; i < matches.length; i++) {
        const next = matches[i]!.rows[cursors[i]!];
        if (next !== undefined && next < row) row = next;
      }
      if (row === Number.MAX_SAFE_INTEGER) break;
      const D = s.sizes[row]!;
      let score = 0.0;
      for (let i = 0; i < matches.length; i++) {
        const m = matches[i]!;
        const at = cursors[i]!;
        if (m.rows[at] !== row) continue;
        cursors[i] = at + 1;
        const f = m.freqs[at]!;
        score += idf[i]! * ((f * (K1 + 1.0)) / (f + K1 * (1 - B + (B * D) / this.avgdl)));
      }
      if (excluded?.has(row)) continue;
      if (filter.rowids && !filter.rowids.has(s.rowids[row]!)) continue;
      let allowed = true;
      for (const rows of required) {
        if (!rows.has(row)) {
          allowed = false;
          break;
        }
      }
      if (allowed) heap.offer(score, row);
    }
    return heap.best().map(({ score, row }) => ({ id: s.rowids[row]!, page_id: s.pageIds[row]!, score }));
  }

  /** Rows holding the phrase (its tokens at consecutive offsets of one column) and the weighted count in each. */
  private phraseMatches(tokens: readonly string[], weights: readonly number[]): PhraseMatches {
    const s = this.snapshot;
    const ids = tokens.map((token) => this.termIds.get(token));
    if (ids.length === 0 || ids.some((id) => id === undefined)) return NO_MATCHES;
    const first = ids[0]!;
    const from = s.termEntries[first]!;
    const to = s.termEntries[first + 1]!;
    const rows = new Int32Array(to - from);
    const freqs = new Float64Array(to - from);
    let n = 0;
    if (ids.length === 1) {
      for (let e = from; e < to; e++) {
        let f = 0;
        for (let k = s.entryInstances[e]!; k < s.entryInstances[e + 1]!; k++) f += weights[s.instanceColumns[k]!] ?? 1.0;
        rows[n] = s.entryRows[e]!;
        freqs[n++] = f;
      }
      return { rows, freqs };
    }
    // The other tokens' entries, walked alongside the first token's (all in row order).
    const cursors = ids.slice(1).map((id) => s.termEntries[id!]!);
    for (let e = from; e < to; e++) {
      const row = s.entryRows[e]!;
      const entries: number[] = [];
      for (let j = 1; j < ids.length; j++) {
        const end = s.termEntries[ids[j]! + 1]!;
        let c = cursors[j - 1]!;
        while (c < end && s.entryRows[c]! < row) c++;
        cursors[j - 1] = c;
        if (c < end && s.entryRows[c] === row) entries.push(c);
      }
      if (entries.length !== ids.length - 1) continue;
      let f = 0;
      let found = false;
      for (let k = s.entryInstances[e]!; k < s.entryInstances[e + 1]!; k++) {
        const column = s.instanceColumns[k]!;
        const offset = s.instanceOffsets[k]!;
        if (entries.every((entry, j) => this.hasInstance(entry, column, offset + j + 1))) {
          f += weights[column] ?? 1.0;
          found = true;
        }
      }
      if (!found) continue;
      rows[n] = row;
      freqs[n++] = f;
    }
    return { rows: rows.subarray(0, n), freqs: freqs.subarray(0, n) };
  }

  private hasInstance(entry: number, column: number, offset: number): boolean {
    const s = this.snapshot;
    for (let k = s.entryInstances[entry]!; k < s.entryInstances[entry + 1]!; k++) {
      const c = s.instanceColumns[k]!;
      if (c > column) return false;
      if (c === column) {
        const o = s.instanceOffsets[k]!;
        if (o === offset) return true;
        if (o > offset) return false;
      }
    }
    return false;
  }

  /**
   * Rows holding any of these facet tokens. Tokens on many rows (a language, "navigation") are kept as a map of the
   * rows, made once; few rows (a page's) are put in a set each time.
   */
  private rowsHolding(tokens: readonly string[]): { has(row: number): boolean } {
    const s = this.snapshot;
    const ids = tokens.flatMap((token) => {
      const id = this.facetIds.get(token);
      return id === undefined ? [] : [id];
    });
    const count = ids.reduce((n, id) => n + s.facetEntries[id + 1]! - s.facetEntries[id]!, 0);
    if (count <= FEW_ROWS) {
      const set = new Set<number>();
      for (const id of ids) for (let k = s.facetEntries[id]!; k < s.facetEntries[id + 1]!; k++) set.add(s.facetRows[k]!);
      return set;
    }
    const key = tokens.join(' ');
    let marks = this.facetMarks.get(key);
    if (!marks) {
      marks = new Uint8Array(this.rows);
      for (const id of ids) for (let k = s.facetEntries[id]!; k < s.facetEntries[id + 1]!; k++) marks[s.facetRows[k]!] = 1;
      if (this.facetMarks.size >= MAX_FACET_MARKS) this.facetMarks.clear();
      this.facetMarks.set(key, marks);
    }
    const rowMarks = marks;
    return { has: (row) => rowMarks[row] === 1 };
  }
}

/**
 * The best `capacity` of the (score, row) pairs offered, rows offered in ascending order: a binary heap whose root is
 * the worst kept (lowest score; of equal scores the highest row, offered last).
 */
class TopRows {
  private readonly scores: Float64Array;
  private readonly rows: Int32Array;
  private size = 0;

  constructor(private readonly capacity: number) {
    this.scores = new Float64Array(capacity);
    this.rows = new Int32Array(capacity);
  }

  offer(score: number, row: number): void {
    if (this.size < this.capacity) {
      let i = this.size++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!this.worse(score, row, this.scores[parent]!, this.rows[parent]!)) break;
        this.scores[i] = this.scores[parent]!;
        this.rows[i] = this.rows[parent]!;
        i = parent;
      }
      this.scores[i] = score;
      this.rows[i] = row;
      return;
    }
    // Rows come in ascending order: an equal score never displaces the root.
    if (this.capacity === 0 || score <= this.scores[0]!) return;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= this.size) break;
      const right = child + 1;
      if (right < this.size && this.worse(this.scores[right]!, this.rows[right]!, this.scores[child]!, this.rows[child]!)) child = right;
      if (!this.worse(this.scores[child]!, this.rows[child]!, score, row)) break;
      this.scores[i] = this.scores[child]!;
      this.rows[i] = this.rows[child]!;
      i = child;
    }
    this.scores[i] = score;
    this.rows[i] = row;
  }

  /** Whether (a, rowA) ranks below (b, rowB). */
  private worse(a: number, rowA: number, b: number, rowB: number): boolean {
    return a < b || (a === b && rowA > rowB);
  }

  /** The pairs kept, best first. */
  best(): Array<{ score: number; row: number }> {
    const out = Array.from({ length: this.size }, (_, i) => ({ score: this.scores[i]!, row: this.rows[i]! }));
    return out.sort((a, b) => b.score - a.score || a.row - b.row);
  }
}

/** Facet tokens on at most this many rows are read into a set per query; more get a map of all rows, kept. */
const FEW_ROWS = 1024;
const MAX_FACET_MARKS = 64;
