import BetterSqlite3 from 'better-sqlite3';
import { stem } from '../../../core/index.js';

/**
 * Splits text into tokens exactly as an FTS5 table with the same `tokenize` option does (an in-memory table of one
 * row, read back through fts5vocab), so a query's words are looked up as the index holds them.
 */
export class Fts5Tokenizer {
  private readonly db: BetterSqlite3.Database;
  private readonly insert: BetterSqlite3.Statement<[string]>;
  private readonly read: BetterSqlite3.Statement<[], string>;
  private readonly clear: BetterSqlite3.Statement<[]>;
  private readonly cache = new Map<string, readonly string[]>();
  private readonly porter: boolean;
  /** unicode61 without tokenchars or separators: in ASCII text, the tokens are the runs of letters and digits. */
  private readonly asciiRuns: boolean;

  /**
   * `shortcut`: a text of lower-case ASCII letters and digits that ends in a digit (a page token, "v14") is its own
   * token without asking the table: unicode61 keeps it one token, and no Porter rule ends in a digit. With the porter
   * tokenizer over unicode61, a word of ASCII letters alone is one token, its Porter stem (core/text's stem: the same
   * algorithm, checked equal over the Cranfield collection's words in postings.test.ts).
   */
  constructor(
    tokenize: string,
    private readonly options: { shortcut?: boolean; capacity?: number } = {},
  ) {
    this.porter = /^tokenize = 'porter unicode61\b/.test(tokenize);
    this.asciiRuns = /^tokenize = 'porter unicode61( remove_diacritics [0-2])?'$/.test(tokenize);
    this.db = new BetterSqlite3(':memory:');
    this.db.exec(`CREATE VIRTUAL TABLE tok USING fts5(x, ${tokenize}); CREATE VIRTUAL TABLE tokv USING fts5vocab(tok, instance);`);
    this.insert = this.db.prepare('INSERT INTO tok (rowid, x) VALUES (1, ?)');
    this.read = this.db.prepare<[], string>('SELECT term FROM tokv ORDER BY "offset"').pluck();
    this.clear = this.db.prepare('DELETE FROM tok');
  }

  tokens(text: string): readonly string[] {
    if (this.options.shortcut ?? true) {
      if (OWN_TOKEN.test(text)) return [text];
      if (this.porter && LETTERS_WORD.test(text)) return [stem(text.toLowerCase())];
      // A phrase of several such words ("pg_stat_activity", "max wal size"): each run is one of the two kinds above.
      if (this.asciiRuns && PRINTABLE_ASCII.test(text)) {
        const runs = text.toLowerCase().match(ASCII_RUN) ?? [];
        if (runs.every((run) => OWN_TOKEN.test(run) || LETTERS_WORD.test(run))) return runs.map((run) => (OWN_TOKEN.test(run) ? run : stem(run)));
      }
    }
    const cached = this.cache.get(text);
    if (cached) return cached;
    this.insert.run(text);
    const tokens = this.read.all();
    this.clear.run();
    if (this.cache.size >= (this.options.capacity ?? 10_000)) this.cache.clear();
    this.cache.set(text, tokens);
    return tokens;
  }

  close(): void {
    this.db.close();
  }
}

/** Texts that are their own token (see Fts5Tokenizer's shortcut). */
const OWN_TOKEN = /^[a-z0-9]{0,62}[0-9]$/;
/** Printable ASCII and ASCII whitespace only. */
const PRINTABLE_ASCII = /^[\t\n\r -~]*$/;
/** A run of ASCII letters and digits (unicode61's token characters within ASCII). */
const ASCII_RUN = /[a-z0-9]+/g;
/** One word of ASCII letters, shorter than FTS5's porter limit (it passes longer tokens through unstemmed). */
const LETTERS_WORD = /^[A-Za-z]{1,60}$/;
