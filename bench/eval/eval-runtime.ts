import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Meilisearch } from 'meilisearch';
import { configSchema, type NotaryConfig } from '../../core/config.js';
import { NotaryError } from '../../core/errors.js';
import type { MeilisearchSettings } from '../../indexer/backends/meilisearch/plugin.js';
import { Runtime, silentLog } from '../../runtime/index.js';
import { createDatabase, dropDatabase } from '../../testkit/postgres.js';

/** A runtime over a fresh data folder in tmp: the composition root as `notary serve` builds it, with these settings. */
export interface EvalRuntime {
  runtime: Runtime;
  /** Closes the runtime and deletes its data folder (and the set's database or Meilisearch index). */
  close(): Promise<void>;
}

/**
 * What a set needs beside its data folder for `indexer.backend`: postgres gets a database of its own on the server of
 * NOTARY_DATABASE_URL (storage and index there), meilisearch an index of its own on indexer.meilisearch.url; both
 * are dropped when the set closes. sqlite-fts5 needs nothing.
 */
async function setBackend(name: string, indexer: NotaryConfig['indexer']): Promise<{ overrides: Partial<NotaryConfig>; drop(): Promise<void> }> {
  const tag = `notary_eval_${name}_${process.pid}_${Date.now().toString(36)}`.replace(/[^a-z0-9_]/g, '_');
  if (indexer.backend === 'postgres') {
    const server = process.env['NOTARY_DATABASE_URL'];
    if (!server) throw new NotaryError('invalid_config', 'the postgres backend needs a PostgreSQL server: set NOTARY_DATABASE_URL');
    const url = await createDatabase(server, tag);
    return { overrides: { storage: { driver: 'postgres', postgres_url: url, connect_timeout_ms: 5_000 } }, drop: () => dropDatabase(server, tag) };
  }
  if (indexer.backend === 'meilisearch') {
    const meilisearch = (indexer as NotaryConfig['indexer'] & { meilisearch: MeilisearchSettings }).meilisearch;
    const { url, api_key: apiKey } = meilisearch;
    if (!url) throw new NotaryError('invalid_config', 'the meilisearch backend needs a server: set NOTARY_MEILISEARCH_URL (and NOTARY_MEILISEARCH_API_KEY)');
    return {
      overrides: { indexer: { ...indexer, meilisearch: { ...meilisearch, index: tag } } as NotaryConfig['indexer'] },
      drop: async () => {
        const client = new Meilisearch({ host: url, ...(apiKey ? { apiKey } : {}) });
        for (const uid of [tag, `${tag}__pages`]) await client.deleteIndexIfExists(uid);
      },
    };
  }
  return { overrides: {}, drop: async () => {} };
}

export async function openEvalRuntime(name: string, settings: { indexer: NotaryConfig['indexer']; crawler?: Partial<NotaryConfig['crawler']> }): Promise<EvalRuntime> {
  const dataDir = mkdtempSync(path.join(tmpdir(), `notary-eval-${name}-`));
  const base = configSchema.parse({ data_dir: dataDir, crawler: settings.crawler ?? {} });
  const backend = await setBackend(name, settings.indexer);
  const config: NotaryConfig = { ...base, indexer: settings.indexer, ...backend.overrides };
  try {
    const runtime = await Runtime.open(config, { log: silentLog });
    return {
      runtime,
      close: async () => {
        await runtime.close();
        rmSync(dataDir, { recursive: true, force: true });
        await backend.drop();
      },
    };
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    await backend.drop();
    throw err;
  }
}
