import BetterSqlite3 from 'better-sqlite3';

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

  /**
   * `shortcut`: a text of lower-case ASCII letters and digits that ends in a digit (a page token, "v14") is its own
   * token without asking the table: unicode61 keeps it one token, and no Porter rule ends in a digit.
   */
  constructor(
    tokenize: string,
    private readonly options: { shortcut?: boolean; capacity?: number } = {},
  ) {
    this.db = new BetterSqlite3(':memory:');
    this.db.exec(`CREATE VIRTUAL TABLE tok USING fts5(x, ${tokenize}); CREATE VIRTUAL TABLE tokv USING fts5vocab(tok, instance);`);
    this.insert = this.db.prepare('INSERT INTO tok (rowid, x) VALUES (1, ?)');
    this.read = this.db.prepare<[], string>('SELECT term FROM tokv ORDER BY "offset"').pluck();
    this.clear = this.db.prepare('DELETE FROM tok');
  }

  tokens(text: string): readonly string[] {
    if ((this.options.shortcut ?? true) && OWN_TOKEN.test(text)) return [text];
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
