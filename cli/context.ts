import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import type { NotaryConfig } from '../core/config.js';
import { CrawlRunStore, FrontierStore } from '../crawler/index.js';
import { Fts5SearchIndex, type SearchIndex } from '../indexer/index.js';
import { Accounts } from '../payments/index.js';
import { loadReranker, type Reranker } from '../reranker/index.js';
import { openStorage, type Storage } from '../storage/db.js';
import { PageStore } from '../storage/pages.js';

export type Log = (level: 'info' | 'warn', message: string) => void;

export const stderrLog: Log = (level, message) => {
  process.stderr.write(`${level === 'warn' ? 'WARNING: ' : ''}${message}\n`);
};

/** Everything a command needs, opened from one validated config. */
export interface AppContext {
  config: NotaryConfig;
  storage: Storage;
  pages: PageStore;
  runs: CrawlRunStore;
  frontier: FrontierStore;
  index: SearchIndex;
  accounts: Accounts;
  close(): Promise<void>;
}

export async function openContext(config: NotaryConfig): Promise<AppContext> {
  const storage = await openStorage(config);
  // The FTS5 index lives in the SQLite file of the embedded deployment; with PostgreSQL state it gets a file of its own.
  const index = storage.sqlite
    ? new Fts5SearchIndex(storage.sqlite)
    : new Fts5SearchIndex(new BetterSqlite3(path.join(config.data_dir, 'index.sqlite')), { ownsHandle: true });
  return {
    config,
    storage,
    pages: new PageStore(storage.db),
    runs: new CrawlRunStore(storage.db),
    frontier: new FrontierStore(storage.db, storage.dialect),
    index,
    accounts: new Accounts(storage.db, { tiers: Object.keys(config.tiers), defaultTier: config.default_tier }),
    close: async () => {
      await index.close();
      await storage.close();
    },
  };
}

export async function openReranker(config: NotaryConfig, log: Log = stderrLog): Promise<Reranker> {
  return loadReranker(config.reranker, { log, precision: config.embeddings.precision });
}
