import type { FastifyInstance } from 'fastify';
import { buildApp, type AppDeps } from '../api/app.js';
import { configSchema, deepMerge, type ConfigInput, type NotaryConfig } from '../core/config.js';
import type { IndexDoc } from '../indexer/search-index.js';
import { Runtime, silentLog, type RuntimeOptions } from '../runtime/index.js';
import type { SearchRequest, SearchResponse, SearchService } from '../search/service.js';

/** Four passages the API suites search with the real pipeline (FTS5 on a real SQLite file, lexical scorer). */
export const API_DOCUMENTS = [
  { url: 'https://docs.test/vacuum', title: 'VACUUM', text: 'vacuum reclaims storage occupied by dead tuples in postgresql tables' },
  { url: 'https://docs.test/analyze', title: 'ANALYZE', text: 'analyze collects statistics about the contents of tables for the query planner' },
  { url: 'https://docs.test/autovacuum', title: 'Autovacuum', text: 'the autovacuum daemon automates vacuum and analyze commands on tables' },
  { url: 'https://docs.test/indexes', title: 'Indexes', text: 'indexes are a common way to enhance database performance for a query' },
];

export function apiIndexDocs(): IndexDoc[] {
  return API_DOCUMENTS.map((d, i) => ({ id: i + 1, pageId: i + 1, url: d.url, title: d.title, headingPath: '', text: d.text }));
}

/** A config for API suites: small limits, tiers of every size, no model download, no dense retrieval. */
export function apiTestConfig(dataDir: string, overrides: ConfigInput = {}): NotaryConfig {
  const base: ConfigInput = {
    data_dir: dataDir,
    server: { body_limit_bytes: 1024 },
    search: { max_depth: 3, max_query_length: 100 },
    pricing: { search: { credits_by_depth: [1, 2, 4] } },
    reranker: { download: false },
    embeddings: { model: 'off' },
    tiers: {
      free: { requests_per_minute: 60, burst: 10 },
      tiny: { requests_per_minute: 60, burst: 2 },
      bulk: { requests_per_minute: 60_000, burst: 1000 },
    },
    default_tier: 'free',
  };
  return configSchema.parse(deepMerge(base as Record<string, unknown>, overrides as Record<string, unknown>));
}

/** Records the requests a search service received, so tests can tell whether a route searched at all. */
export class RecordingSearch implements SearchService {
  calls: SearchRequest[] = [];
  constructor(readonly inner: SearchService) {}
  async search(request: SearchRequest): Promise<SearchResponse> {
    this.calls.push(request);
    return this.inner.search(request);
  }
}

export interface ApiHarness {
  runtime: Runtime;
  search: RecordingSearch;
  app: FastifyInstance;
  close(): Promise<void>;
}

/**
 * The service as `notary serve` builds it (the composition root, the real search pipeline over the four documents),
 * without listening; `deps` replaces parts of what buildApp gets.
 */
export async function startApi(config: NotaryConfig, options: RuntimeOptions & { deps?: Partial<AppDeps>; withExtract?: boolean } = {}): Promise<ApiHarness> {
  const runtime = await Runtime.open(config, { env: {}, log: silentLog, ...options });
  await runtime.index.upsert(apiIndexDocs());
  const search = new RecordingSearch(await runtime.search());
  const app = await buildApp({
    config,
    gate: runtime.paidCallGate(),
    search,
    collections: runtime.collections,
    webhooks: runtime.webhooks,
    sites: runtime.sites,
    ...(options.withExtract ? { extract: runtime.extract() } : {}),
    crawl: runtime.crawlJobDeps(),
    health: async () => ({ status: 'ok', documents: API_DOCUMENTS.length }),
    ...options.deps,
  });
  return {
    runtime,
    search,
    app,
    close: async () => {
      await app.close();
      await runtime.close();
    },
  };
}
