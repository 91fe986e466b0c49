import { z } from 'zod';
import type { ConfigFragment } from '../../../core/index.js';

const fts5Schema = z
  .object({
    /**
     * Full-text rankings kept for repeated queries (passage ids and scores, about 2 KiB each; least recently used
     * go first). Any write to the index, by any process, empties it. 0 turns it off.
     */
    ranking_cache: z.number().int().min(0).default(10_000),
    /**
     * Rank whole pages on a second, read-only connection in a worker thread, beside the passage query on the main
     * one (two cores for one search).
     */
    parallel_page_ranking: z.boolean().default(true),
    /**
     * From this many passages on, rank passages on two read-only connections in worker threads, each over half of
     * the rows (the lists merge into the same ranking), so that the main thread stays free to send the vector
     * search while bm25() runs over every match, and an idle core shares that work (at a million passages the full
     * text is most of a search). 0 = never.
     */
    parallel_passage_ranking_above: z.number().int().min(0).default(100_000),
    /**
     * Up to this many passages, rank from a copy of the full-text index held in memory, with bm25 computed as FTS5
     * computes it (the same rankings): FTS5 reads and scores every matching row in SQL, several times the cost. The
     * copy is made in a worker thread and used only while nothing has been written since (any process); after a
     * write SQL ranks until the next copy is in. About 4 KB of memory a passage in each API process (both tables'
     * token positions: 17.9 MB of arrays plus term strings for the PostgreSQL docs' 7,456 passages,
     * `npm run bench:fts-memory`). 0 = never.
     */
    memory_ranking_up_to: z.number().int().min(0).default(50_000),
  })
  .prefault({});

export type Fts5Settings = z.infer<typeof fts5Schema>;

/**
 * `indexer.sqlite-fts5`: the embedded index's own settings. They were `search.*` settings before the index was a
 * plug-in; those names are still read, with a warning naming the new key.
 */
export const fts5Config: ConfigFragment<Fts5Settings> = {
  path: ['indexer', 'sqlite-fts5'],
  schema: fts5Schema,
  formerly: {
    ranking_cache: ['search', 'ranking_cache'],
    parallel_page_ranking: ['search', 'parallel_page_ranking'],
    parallel_passage_ranking_above: ['search', 'parallel_passage_ranking_above'],
    memory_ranking_up_to: ['search', 'memory_ranking_up_to'],
  },
};
