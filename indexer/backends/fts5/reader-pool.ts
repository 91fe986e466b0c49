import type BetterSqlite3 from 'better-sqlite3';
import { Fts5Reader } from './reader.js';

export interface Fts5ReaderOptions {
  /**
   * Rank whole pages on a second, read-only connection in a worker thread (opened at the first page search), so
   * that a search's page and passage queries run at once. Needs a database file; default off.
   */
  pageReader?: boolean;
  /**
   * From this many passages on, rank passages on two read-only connections in worker threads, each over half of
   * the rowid range, so that the calling thread stays free while the costly bm25() of every match runs (a
   * search's vector stage is sent from it meanwhile) and two cores share it. Needs a database file; 0 or absent =
   * never.
   */
  passageReaderAbove?: number;
}

/** The read-only connections in worker threads that rank beside the calling thread, made at first use. */
export class Fts5ReaderPool {
  private reader: Fts5Reader | null = null;
  /** Two readers of passages, each ranking half of the rowid range (made when the table first reaches the size). */
  private passagesReaders: readonly Fts5Reader[] = [];

  constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly options: Fts5ReaderOptions,
    /** Rows in the passage table. */
    private readonly passageCount: () => number,
  ) {}

  /** The page reader when asked for and usable: made at first use, over this connection's database file. */
  pageReader(): Fts5Reader | null {
    if (!this.options.pageReader) return null;
    if (!this.reader) {
      const file = this.db.name;
      if (!file || file === ':memory:' || this.db.memory) return null;
      this.reader = new Fts5Reader(file);
    }
    return this.reader.usable ? this.reader : null;
  }

  /**
   * The passage readers when asked for, both usable, and the table holds at least `passageReaderAbove` rows (below
   * that a query costs less than the trip to the workers saves); else none.
   */
  passageReaders(): readonly Fts5Reader[] {
    const above = this.options.passageReaderAbove ?? 0;
    if (above <= 0) return [];
    const file = this.db.name;
    if (!file || file === ':memory:' || this.db.memory) return [];
    if (this.passageCount() < above) return [];
    if (this.passagesReaders.length === 0) this.passagesReaders = [new Fts5Reader(file), new Fts5Reader(file)];
    return this.passagesReaders.every((reader) => reader.usable) ? this.passagesReaders : [];
  }

  async close(): Promise<void> {
    await this.reader?.close();
    this.reader = null;
    await Promise.all(this.passagesReaders.map((reader) => reader.close()));
    this.passagesReaders = [];
  }
}
