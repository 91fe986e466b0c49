import type { VectorIndexHarness } from '../indexer/vector-index.contract.js';
import type { VectorIndex } from '../indexer/vector-index.js';
import { migrateToLatest, type Storage } from '../storage/db.js';
import { PageStore } from '../storage/pages.js';
import type { Page } from '../storage/schema.js';

let counter = 0;

/**
 * A vector contract harness over a database (`connect` opens a new handle on it, as another process would) and an
 * index backend built by `makeIndex` on such a handle.
 */
export async function vectorHarness(
  connect: () => Storage,
  makeIndex: (storage: Storage, options: { model: string; dimensions: number }) => Promise<VectorIndex>,
): Promise<VectorIndexHarness> {
  const main = connect();
  await migrateToLatest(main);
  const store = new PageStore(main.db);
  const opened: Array<{ index: VectorIndex; storage: Storage }> = [];
  const passagesFor = (page: Page, n: number) =>
    Array.from({ length: n }, (_, i) => ({ ordinal: i, url: page.url, title: 'T', heading_path: 'H', text: `passage ${i} of ${page.url}`, word_count: 4 }));
  const ids = (rows: Array<{ id: number; ordinal: number }>) => [...rows].sort((a, b) => a.ordinal - b.ordinal).map((r) => r.id);
  const current = async (page: Page) => (await store.getById(page.id)) ?? page;
  return {
    async openIndex(options) {
      const storage = connect();
      const index = await makeIndex(storage, options);
      opened.push({ index, storage });
      return index;
    },
    async addPage(n) {
      const url = `http://vectors.test/page-${process.pid}-${counter++}`;
      const { id } = await store.saveFetched({
        url, final_url: url, host: 'vectors.test', http_status: 200, content_type: 'text/html', etag: null, last_modified: null,
        content_hash: `hash-${url}`, title: 'T', html: '<p>x</p>', crawl_depth: 0,
      });
      const page = (await store.getById(id))!;
      return { page, passageIds: ids(await store.replacePassages(page, passagesFor(page, n))) };
    },
    async replacePassages(page, n) {
      const fresh = await current(page);
      return ids(await store.replacePassages(fresh, passagesFor(fresh, n)));
    },
    async removePassages(page) {
      return store.removePassages(await current(page));
    },
    async close() {
      for (const { index, storage } of opened) {
        await index.close();
        await storage.close();
      }
      await main.close();
    },
  };
}
