import type { NotaryConfig } from '../core/index.js';
import { indexBackendNamed, type IndexBackend } from '../indexer/index.js';
import type { IndexDoc, PageDoc } from '../indexer/index.js';
import type { RateLimitStore, IdempotencyStore } from '../payments/index.js';
import {
  MemoryRateLimitStore,
  openRedis,
  RedisIdempotencyStore,
  RedisRateLimitStore,
  SqlIdempotencyStore,
} from '../payments/index.js';
import { DEFAULT_COLLECTION_ID } from '../core/index.js';
import { CollectionStore } from '../storage/index.js';
import type { Storage } from '../storage/index.js';
import type { Log } from './log.js';
import './plugins.js'; // the registered index backends

export type { IndexBackend } from '../indexer/index.js';

/** The search index and vector store of `indexer.backend`: the registered backend of that name opens them. */
export function openIndexBackend(config: NotaryConfig, storage: Storage, log?: Log): Promise<IndexBackend> {
  return indexBackendNamed(config.indexer.backend).open({ config, storage, ...(log ? { log } : {}) });
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
    // Their pages' collections, which collection filters read (a rebuild must not put every page in the default one).
    const collections = await new CollectionStore(storage.db).ofPages([...new Set(rows.map((r) => Number(r.page_id)))]);
    yield rows.map((r) => ({
      id: Number(r.id),
      pageId: Number(r.page_id),
      url: r.url,
      title: r.title,
      headingPath: r.heading_path,
      text: r.text,
      collections: collections.get(Number(r.page_id)) ?? [DEFAULT_COLLECTION_ID],
    }));
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
    const collections = await new CollectionStore(storage.db).ofPages(pages.map((p) => Number(p.id)));
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
        collections: collections.get(Number(page.id)) ?? [DEFAULT_COLLECTION_ID],
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
