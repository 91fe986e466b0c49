import path from 'node:path';
import { configSection } from '../../../core/index.js';
import type { IndexBackendPlugin } from '../../backend-plugin.js';
import { sqlVectorStore } from '../../sql-vector-store.js';
import type { Storage } from '../../../storage/index.js';
import { fts5Config } from './config.js';

/**
 * The embedded index (the default): SQLite FTS5 in the SQLite file of the embedded deployment (with PostgreSQL state,
 * a file of its own in data_dir), vectors in the SQL vector store. Its settings are its section, indexer.sqlite-fts5 (config.ts).
 * The index's modules load when it opens, so that registering it costs a command nothing.
 */
export const fts5Backend: IndexBackendPlugin = {
  name: 'sqlite-fts5',
  config: [fts5Config],
  async open({ config, storage, log }) {
    const [{ default: BetterSqlite3 }, { Fts5SearchIndex }] = await Promise.all([import('better-sqlite3'), import('./search-index.js')]);
    const settings = configSection(config, fts5Config);
    const fts5Options = {
      rankingCache: settings.ranking_cache,
      pageReader: settings.parallel_page_ranking,
      passageReaderAbove: settings.parallel_passage_ranking_above,
      memoryRankingUpTo: settings.memory_ranking_up_to,
    };
    const index = storage.sqlite
      ? new Fts5SearchIndex(storage.sqlite, fts5Options)
      : new Fts5SearchIndex(new BetterSqlite3(path.join(config.data_dir, 'index.sqlite')), { ownsHandle: true, ...fts5Options });
    return {
      index,
      vectors: sqlVectorStore(config, storage, log),
      rebuild: async (source, onProgress, pages) => {
        let n = 0;
        await index.delete((await index.stats()).documents > 0 ? await allIds(storage) : []);
        if (pages) {
          await index.deletePages((await storage.db.selectFrom('pages').select('id').execute()).map((r) => Number(r.id)));
          for await (const batch of pages) await index.upsertPages(batch);
        }
        for await (const batch of source) {
          await index.upsert(batch);
          n += batch.length;
          onProgress?.(n);
        }
        return n;
      },
      ready: async () => true,
      layoutChanged: index.rebuilt,
    };
  },
};

async function allIds(storage: Storage): Promise<number[]> {
  return (await storage.db.selectFrom('passages').select('id').execute()).map((r) => Number(r.id));
}
