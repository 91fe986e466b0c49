import { z } from 'zod';
import {
  configSection,
  type ConfigFragment,
  type NotaryConfig,
  NotaryError,
  endpointOf,
  waitAtStart,
} from '../../../core/index.js';
import type { IndexBackendPlugin } from '../../backend-plugin.js';
import type { MeilisearchConnection } from './connection.js';

const meilisearchSchema = z
  .object({
    url: z.url().optional(),
    /** Master or admin key for crawlers and indexers; the search-only key (`notary index search-key`) for API nodes. */
    api_key: z.string().min(1).optional(),
    index: z.string().regex(/^[A-Za-z0-9_-]{1,200}$/, 'letters, digits, - and _').default('notary_passages'),
    /** How long a write waits for its Meilisearch task. */
    task_timeout_ms: z.number().int().positive().default(60_000),
    request_timeout_ms: z.number().int().positive().default(10_000),
    batch_size: z.number().int().positive().max(10_000).default(1000),
    /**
     * Where passage vectors are kept: service (the service database's SQL vector store, as with sqlite-fts5) or
     * meilisearch (the engine's vector store, HNSW, beside the passages). service is the default: the engine's
     * vector search was the floor of a depth-1 search (issue 34, docs/benchmarks.md, fifth round).
     * NOTARY_MEILISEARCH_VECTORS overrides.
     */
    vectors: z
      .enum(['service', 'meilisearch'], { error: 'meilisearch (the engine\'s vector store) or service (the service database\'s vector store)' })
      .default('service'),
  })
  .prefault({});

export type MeilisearchSettings = z.infer<typeof meilisearchSchema>;

/** `indexer.meilisearch`: the Meilisearch server passages and vectors go to. */
export const meilisearchConfig: ConfigFragment<MeilisearchSettings> = {
  path: ['indexer', 'meilisearch'],
  schema: meilisearchSchema,
  refine(section, cfg, issue) {
    if (cfg.indexer.backend === 'meilisearch' && !section.url) issue(['url'], 'required when indexer.backend is meilisearch (NOTARY_MEILISEARCH_URL)');
  },
  env: [
    { env: 'NOTARY_MEILISEARCH_URL', path: ['indexer', 'meilisearch', 'url'], kind: 'string' },
    { env: 'NOTARY_MEILISEARCH_API_KEY', path: ['indexer', 'meilisearch', 'api_key'], kind: 'string' },
    { env: 'NOTARY_MEILISEARCH_INDEX', path: ['indexer', 'meilisearch', 'index'], kind: 'string' },
    { env: 'NOTARY_MEILISEARCH_VECTORS', path: ['indexer', 'meilisearch', 'vectors'], kind: 'string' },
  ],
};

/** The connection `indexer.meilisearch` describes. */
export async function meilisearchConnection(config: NotaryConfig): Promise<MeilisearchConnection> {
  const m = configSection(config, meilisearchConfig);
  const { MeilisearchConnection } = await import('./connection.js');
  return new MeilisearchConnection({
    url: m.url ?? 'http://127.0.0.1:7700',
    apiKey: m.api_key,
    index: m.index,
    taskTimeoutMs: m.task_timeout_ms,
    requestTimeoutMs: m.request_timeout_ms,
    batchSize: m.batch_size,
  });
}

/** `notary index search-key`: creates (once) and prints the Meilisearch key API nodes search with. */
async function searchKeyCommand(config: NotaryConfig): Promise<void> {
  if (config.indexer.backend !== 'meilisearch') throw new NotaryError('invalid_config', 'indexer.backend is not meilisearch: there is no search key to make');
  const connection = await meilisearchConnection(config);
  await connection.ensureIndex();
  const { key, uid } = await connection.searchKey();
  process.stderr.write(`search-only key ${uid} (actions: search, documents.get on ${configSection(config, meilisearchConfig).index}); give it to API nodes as NOTARY_MEILISEARCH_API_KEY\n`);
  process.stdout.write(`${key}\n`);
}

/**
 * Passages and pages in a Meilisearch server (waited for at start), vectors there or in the service database
 * (indexer.meilisearch.vectors). Its modules load when it opens.
 */
export const meilisearchBackend: IndexBackendPlugin = {
  name: 'meilisearch',
  config: [meilisearchConfig],
  async open({ config, storage, log }) {
    const [{ MeilisearchSearchIndex }, { MeilisearchVectorIndex }, { chosenVectorStore }] = await Promise.all([
      import('./search-index.js'),
      import('./vector-index.js'),
      import('../vector-choice.js'),
    ]);
    const connection = await meilisearchConnection(config);
    const section = configSection(config, meilisearchConfig);
    const url = section.url ?? '';
    const index = await waitAtStart(
      { what: `Meilisearch at ${endpointOf(url)}`, setting: 'indexer.meilisearch.url (NOTARY_MEILISEARCH_URL)', waitMs: config.server.start_wait_ms },
      () => MeilisearchSearchIndex.open(connection),
    );
    return {
      index,
      vectors: chosenVectorStore({
        setting: 'indexer.meilisearch.vectors',
        value: section.vectors,
        own: {
          value: 'meilisearch',
          open: (options) => MeilisearchVectorIndex.open(connection, storage, options),
          peek: async (options) => MeilisearchVectorIndex.attach(connection, storage, options),
        },
        deps: { config, storage, log },
      }),
      rebuild: (source, onProgress, pages) => index.rebuild(source, onProgress, pages),
      ready: () => connection.healthy(),
    };
  },
  cli(index, context) {
    index
      .command('search-key')
      .description('Meilisearch: create (once) and print the search-only key for API nodes (needs the master or an admin key)')
      .action(() => searchKeyCommand(context.config()));
  },
};
