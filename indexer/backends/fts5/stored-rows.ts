/**
 * Rows of stored fields (what a hit shows: URL, title, text, facts) by rowid, kept until the index's write
 * generation moves on: a search reads the stored fields of every passage it ranks (30 full-text hits and up to 60
 * vector hits at depth 1), and most of them were read by recent searches already. Least recently used rows go first
 * beyond `capacity`; 0 keeps none.
 */
export class StoredRows<Row> {
  private readonly rows = new Map<number, Row>();
  private generation = '';

  constructor(
    readonly capacity: number,
    /** The rows of these ids (in any order; an id without a row is left out), with the id of each. */
    private readonly read: (ids: readonly number[]) => ReadonlyArray<{ id: number; row: Row }>,
  ) {}

  /** Rows held now. */
  get size(): number {
    return this.rows.size;
  }

  /**
   * The rows of `ids` as of `generation` (read before the rows, so that a write after it makes the next call read
   * again): the ones kept, and the others read in one call.
   */
  get(ids: readonly number[], generation: string): Map<number, Row> {
    if (generation !== this.generation) {
      this.rows.clear();
      this.generation = generation;
    }
    const out = new Map<number, Row>();
    const missing: number[] = [];
    for (const id of ids) {
      const row = this.rows.get(id);
      if (row === undefined) {
        missing.push(id);
        continue;
      }
      // Most recently used last.
      this.rows.delete(id);
      this.rows.set(id, row);
      out.set(id, row);
    }
    if (missing.length === 0) return out;
    for (const { id, row } of this.read(missing)) {
      out.set(id, row);
      if (this.capacity <= 0) continue;
      if (this.rows.size >= this.capacity) {
        const oldest = this.rows.keys().next();
        if (!oldest.done) this.rows.delete(oldest.value);
      }
      this.rows.set(id, row);
    }
    return out;
  }
}
