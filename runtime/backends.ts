import BetterSqlite3 from 'better-sqlite3';
import path from 'node:path';
import type { NotaryConfig } from '../core/config.js';
import { endpointOf, waitAtStart } from '../core/start-wait.js';
import { MeilisearchConnection } from '../indexer/backends/meilisearch/connection.js';
import { MeilisearchSearchIndex } from '../indexer/backends/meilisearch/search-index.js';
import { MeilisearchVectorIndex } from '../indexer/backends/meilisearch/vector-index.js';
import { PostgresSearchIndex } from '../indexer/backends/postgres/search-index.js';
import { PgVectorIndex } from '../indexer/backends/postgres/vector-index.js';
import { Fts5SearchIndex } from '../indexer/backends/fts5/search-index.js';
import type { IndexDoc, PageDoc, SearchIndex } from '../indexer/search-index.js';
import { SqlVectorIndex } from '../indexer/sql-vector-index.js';
import type { VectorIndex } from '../indexer/vector-index.js';
import type { RateLimitStore } from '../payments/rate-limit.js';
import { MemoryRateLimitStore } from '../payments/rate-limit.js';
import type { IdempotencyStore } from '../payments/stores/idempotency.js';
import { openRedis, RedisIdempotencyStore, RedisRateLimitStore } from '../payments/stores/redis.js';
import { SqlIdempotencyStore } from '../payments/stores/sql-idempotency.js';
import type { Storage } from '../storage/db.js';
import type { Log } from './log.js';

/** The search index of `indexer.backend`, where its vectors go, and what its readiness probe asks. */
export interface IndexBackend {
  index: SearchIndex;
  /** The vector index of an embedding model on this backend (SQL table, pgvector, or Meilisearch's vector store). */
  vectors(options: { model: string; dimensions: number }): Promise<VectorIndex>;
  /**
   * Rebuilds the whole index from the stored passages (and the page-level index from `pages`) without serving a
   * half-built one.
   */
  rebuild(source: AsyncIterable<readonly IndexDoc[]>, onProgress?: (documents: number) => void, pages?: AsyncIterable<readonly PageDoc[]>): Promise<number>;
  /** A reachability probe for /readyz. */
  ready(): Promise<boolean>;
  /** True when opening made the index's tables anew over an older layout: it must be rebuilt from the stored passages. */
  layoutChanged?: boolean;
  meilisearch?: MeilisearchConnection;
}

export function meilisearchConnection(config: NotaryConfig): MeilisearchConnection {
  const m = config.indexer.meilisearch;
  return new MeilisearchConnection({
    url: m.url ?? 'http://127.0.0.1:7700',
    apiKey: m.api_key,
    index: m.index,
    taskTimeoutMs: m.task_timeout_ms,
    requestTimeoutMs: m.request_timeout_ms,
    batchSize: m.batch_size,
  });
}

/** HNSW settings of the SQL vector store: its graph is saved beside the SQLite file (PostgreSQL: in data_dir). */
export function sqlVectorAnn(config: NotaryConfig, storage: Storage, log?: Log): { above: number; directory?: string; log?: (message: string) => void } {
  const above = config.embeddings.ann_above;
  const told = log ? { log: (message: string) => log('info', message) } : {};
  if (!config.embeddings.ann_persist || storage.file === ':memory:') return { above, ...told };
  return { above, directory: storage.file ? `${storage.file}.hnsw` : path.join(config.data_dir, 'vector-graphs'), ...told };
}

export async function openIndexBackend(config: NotaryConfig, storage: Storage, log?: Log): Promise<IndexBackend> {
  const sqlVectors = async (options: { model: string; dimensions: number }) =>
    new SqlVectorIndex(storage, { ...options, ann: sqlVectorAnn(config, storage, log) });
  switch (config.indexer.backend) {
    case 'sqlite-fts5': {
      // The FTS5 index lives in the SQLite file of the embedded deployment; with PostgreSQL state it gets a file of its own.
      const fts5Options = {
        rankingCache: config.search.ranking_cache,
        pageReader: config.search.parallel_page_ranking,
        passageReaderAbove: config.search.parallel_passage_ranking_above,
        memoryRankingUpTo: config.search.memory_ranking_up_to,
      };
      const index = storage.sqlite
        ? new Fts5SearchIndex(storage.sqlite, fts5Options)
        : new Fts5SearchIndex(new BetterSqlite3(path.join(config.data_dir, 'index.sqlite')), { ownsHandle: true, ...fts5Options });
      return {
        index,
        vectors: sqlVectors,
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
    }
    case 'postgres': {
      const index = await PostgresSearchIndex.open(storage, { ranking: config.indexer.postgres.ranking });
      return {
        index,
        vectors: (options) => PgVectorIndex.open(storage, options),
        rebuild: (source, onProgress, pages) => index.rebuild(source, onProgress, pages),
        ready: async () => true,
      };
    }
    case 'meilisearch': {
      const connection = meilisearchConnection(config);
      const url = config.indexer.meilisearch.url ?? '';
      const index = await waitAtStart(
        { what: `Meilisearch at ${endpointOf(url)}`, setting: 'indexer.meilisearch.url (NOTARY_MEILISEARCH_URL)', waitMs: config.server.start_wait_ms },
        () => MeilisearchSearchIndex.open(connection),
      );
      return {
        index,
        vectors: (options) => MeilisearchVectorIndex.open(connection, storage, options),
        rebuild: (source, onProgress, pages) => index.rebuild(source, onProgress, pages),
        ready: () => connection.healthy(),
        meilisearch: connection,
      };
    }
  }
}

async function allIds(storage: Storage): Promise<number[]> {
  return (await storage.db.selectFrom('passages').select('id').execute()).map((r) => Number(r.id));
}

/** The stored passages in id order, in batches, as index documents (what a rebuild writes). */
export async function* storedPassages(storage: Storage, batch = 1000): AsyncGenerator<IndexDoc[]> {
  let after = 0;
  for (;;) {
    const rows = await storage.db
      .selectFrom('passages')
      .select(['id', 'page_id', 'url', 'title', 'heading_path', 'text'])
      .where('id', '>', after)
      .orderBy('id')
      .limit(batch)
      .execute();
    if (rows.length === 0) return;
    yield rows.map((r) => ({ id: Number(r.id), pageId: Number(r.page_id), url: r.url, title: r.title, headingPath: r.heading_path, text: r.text }));
    after = Number(rows[rows.length - 1]!.id);
  }
}

/**
 * The page-level documents of the stored pages that have passages, in page id order, in batches: title, the headings
 * of their passages' heading paths (each once, in order), the passages' text in order, and the page's facts. What a
 * rebuild writes to the page-level index (indexing a page writes the same from its extracted document).
 */
export async function* storedPages(storage: Storage, batch = 200): AsyncGenerator<PageDoc[]> {
  let after = 0;
  for (;;) {
    const pages = await storage.db
      .selectFrom('pages')
      .select(['id', 'url', 'title', 'language', 'navigation', 'translation_key'])
      .where('id', '>', after)
      .where('state', '!=', 'gone')
      .where('id', 'in', (eb) => eb.selectFrom('passages').select('page_id'))
      .orderBy('id')
      .limit(batch)
      .execute();
    if (pages.length === 0) return;
    const passages = await storage.db
      .selectFrom('passages')
      .select(['page_id', 'title', 'heading_path', 'text'])
      .where('page_id', 'in', pages.map((p) => p.id))
      .orderBy('page_id')
      .orderBy('ordinal')
      .execute();
    const byPage = new Map<number, typeof passages>();
    for (const passage of passages) byPage.set(Number(passage.page_id), [...(byPage.get(Number(passage.page_id)) ?? []), passage]);
    yield pages.map((page) => {
      const own = byPage.get(Number(page.id)) ?? [];
      const headings = [...new Set(own.flatMap((p) => p.heading_path.split(' > ').map((h) => h.trim()).filter(Boolean)))];
      return {
        pageId: Number(page.id),
        url: page.url,
        title: own[0]?.title || page.title || page.url,
        headings: headings.join('\n'),
        text: own.map((p) => p.text).join('\n\n'),
        ...(page.language ? { language: page.language } : {}),
        ...(page.navigation ? { navigation: true } : {}),
        ...(page.translation_key ? { translationKey: page.translation_key } : {}),
      };
    });
    after = Number(pages[pages.length - 1]!.id);
  }
}

export interface SharedStores {
  rateLimits: RateLimitStore;
  idempotency: IdempotencyStore;
  ready(): Promise<boolean>;
  close(): Promise<void>;
}

/** Rate limits and idempotency records of `stores.backend`: in process and in the database, or both in Redis. */
export function openStores(config: NotaryConfig, storage: Storage): SharedStores {
  if (config.stores.backend === 'redis' && config.stores.redis_url) {
    const redis = openRedis(config.stores.redis_url);
    const prefix = config.stores.redis_prefix;
    return {
      rateLimits: new RedisRateLimitStore(redis, prefix),
      idempotency: new RedisIdempotencyStore(redis, prefix),
      ready: async () => {
        try {
          return (await redis.ping()) === 'PONG';
        } catch {
          return false;
        }
      },
      close: async () => {
        redis.disconnect();
      },
    };
  }
  return { rateLimits: new MemoryRateLimitStore(), idempotency: new SqlIdempotencyStore(storage.db), ready: async () => true, close: async () => {} };
}
