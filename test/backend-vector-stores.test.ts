import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type ConfigInput, type NotaryConfig } from '../core/config.js';
import type { VectorIndex } from '../indexer/vector-index.js';
import { vectorIndexContract } from '../indexer/vector-index.contract.js';
import { openIndexBackend } from '../runtime/backends.js';
import type { Log } from '../runtime/log.js';
import '../runtime/plugins.js';
import { migrateToLatest, openPostgres, openSqlite, type Storage } from '../storage/db.js';
import { PageStore } from '../storage/pages.js';
import { available } from '../testkit/components.js';
import { meilisearchAvailable, startMeilisearch, type TestMeilisearch } from '../testkit/meilisearch.js';
import { createDatabase, startPostgres, type TestPostgres } from '../testkit/postgres.js';
import { vectorHarness } from '../testkit/vector-harness.js';

/**
 * indexer.<backend>.vectors (issue 34): a backend with a vector store of its own can keep its passage vectors in the
 * service database's vector store instead. Each backend's setting passes the vector index contract (filters
 * included) through the backend's own factory, and switching stores on an index whose vectors are in the other says
 * so at open.
 */
const dir = mkdtempSync(path.join(tmpdir(), 'notary-backend-vectors-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let counter = 0;

const configFor = (indexer: Record<string, unknown>, storage?: ConfigInput['storage']): NotaryConfig =>
  loadConfig({ env: {}, overrides: { data_dir: path.join(dir, `data-${counter++}`), indexer: indexer as ConfigInput['indexer'], ...(storage ? { storage } : {}) } });

async function opened(config: NotaryConfig, storage: Storage, log?: Log): Promise<VectorIndex> {
  const backend = await openIndexBackend(config, storage, log);
  return backend.vectors({ model: 'contract-model', dimensions: 8 });
}

/** The switch check: vectors written with one setting, then the index opened with the other. */
function switchesStores(
  configs: () => { own: NotaryConfig; service: NotaryConfig; ownName: string; setting: string },
  connect: () => Promise<Storage>,
): void {
  it('says what to do when the vectors are in the other store: embed again, or set the setting back', async () => {
    const storage = await connect();
    const { own, service, ownName, setting } = configs();
    try {
      await migrateToLatest(storage);
      const pages = new PageStore(storage.db);
      const url = `http://switch.test/${counter++}`;
      const { id } = await pages.saveFetched({ url, final_url: url, host: 'switch.test', http_status: 200, content_type: 'text/html', etag: null, last_modified: null, content_hash: url, title: 'T', html: '<p>x</p>', crawl_depth: 0 });
      const page = (await pages.getById(id))!;
      const rows = await pages.replacePassages(page, [0, 1].map((ordinal) => ({ ordinal, url, title: 'T', heading_path: 'H', text: `passage ${ordinal}`, word_count: 2 })));
      const vector = Float32Array.from([1, 0, 0, 0, 0, 0, 0, 0]);
      const first = await opened(own, storage);
      expect(first.name).not.toBe('sql-exact');
      await first.upsert(rows.map((r) => ({ id: r.id, pageId: page.id, url, vector })));
      await first.close();

      const warnings: string[] = [];
      const second = await opened(service, storage, (level, message) => {
        if (level === 'warn') warnings.push(message);
      });
      expect(second.name).toBe('sql-exact');
      expect(await second.search(vector, { limit: 5 })).toEqual([]);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain(`${setting} is service, but 2 passages have a vector of contract-model in the ${ownName} store and 0 in the service store`);
      expect(warnings[0]).toMatch(/embedded again into the service store .*set .* back to /);
      await second.upsert(rows.map((r) => ({ id: r.id, pageId: page.id, url, vector })));
      await second.close();

      // Once both hold them, no warning either way; back on the engine's store with the service's fuller, one.
      const quiet: string[] = [];
      const heard: Log = (level, message) => {
        if (level === 'warn') quiet.push(message);
      };
      await (await opened(service, storage, heard)).close();
      await (await opened(own, storage, heard)).close();
      expect(quiet).toEqual([]);
    } finally {
      await storage.close();
    }
  }, 60_000);
}

describe('the vectors setting of each backend', () => {
  it('is checked with a message that names the values', () => {
    expect(() => configFor({ backend: 'sqlite-fts5', meilisearch: { vectors: 'sql' } })).toThrow(/indexer\.meilisearch\.vectors: meilisearch \(the engine's vector store\) or service/);
    expect(() => configFor({ backend: 'sqlite-fts5', postgres: { vectors: 'sql' } })).toThrow(/indexer\.postgres\.vectors: pgvector \(a pgvector HNSW index\) or service/);
    const env = loadConfig({ env: { NOTARY_MEILISEARCH_VECTORS: 'service', NOTARY_POSTGRES_VECTORS: 'service' }, overrides: { data_dir: dir } });
    expect(env.indexer).toMatchObject({ meilisearch: { vectors: 'service' }, postgres: { vectors: 'service' } });
  });
});

describe.runIf(meilisearchAvailable())('meilisearch with indexer.meilisearch.vectors service', () => {
  let server: TestMeilisearch | undefined;
  beforeAll(async () => {
    server = await startMeilisearch();
  }, 60_000);
  afterAll(async () => server?.stop());
  const meili = (vectors: string, index = `vectors_${process.pid}_${counter++}`) => ({ backend: 'meilisearch', meilisearch: { url: server!.url, api_key: server!.masterKey, index, vectors } });

  vectorIndexContract('meilisearch, vectors in the service store', async () => {
    const config = configFor(meili('service'));
    const file = path.join(dir, `meili-${counter++}.sqlite`);
    return vectorHarness(() => openSqlite(file), async (storage, options) => {
      const backend = await openIndexBackend(config, storage);
      return backend.vectors(options);
    });
  });

  switchesStores(
    () => {
      const index = `switch_${process.pid}_${counter++}`;
      return { own: configFor(meili('meilisearch', index)), service: configFor(meili('service', index)), ownName: 'meilisearch', setting: 'indexer.meilisearch.vectors' };
    },
    async () => openSqlite(path.join(dir, `switch-${counter++}.sqlite`)),
  );
});

describe.runIf(available('PostgreSQL (Debian)', existsSync('/usr/lib/postgresql')))('postgres with indexer.postgres.vectors service', () => {
  let server: TestPostgres | undefined;
  beforeAll(async () => {
    server = await startPostgres();
  }, 120_000);
  afterAll(() => server?.stop());
  const pg = async () => {
    const url = await createDatabase(server!.url, `vectors_${process.pid}_${counter++}`);
    return { url, storage: { driver: 'postgres' as const, postgres_url: url } };
  };

  vectorIndexContract('postgres, vectors in the service store', async () => {
    const { url, storage } = await pg();
    const config = configFor({ backend: 'postgres', postgres: { vectors: 'service' } }, storage);
    return vectorHarness(() => openPostgres(url), async (handle, options) => {
      const backend = await openIndexBackend(config, handle);
      return backend.vectors(options);
    });
  });

  let url = '';
  switchesStores(
    () => {
      const storage = { driver: 'postgres' as const, postgres_url: url };
      return {
        own: configFor({ backend: 'postgres', postgres: { vectors: 'pgvector' } }, storage),
        service: configFor({ backend: 'postgres', postgres: { vectors: 'service' } }, storage),
        ownName: 'pgvector',
        setting: 'indexer.postgres.vectors',
      };
    },
    async () => {
      url = (await pg()).url;
      return openPostgres(url);
    },
  );
});
