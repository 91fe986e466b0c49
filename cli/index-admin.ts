import type { NotaryConfig } from '../core/config.js';
import { NotaryError } from '../core/errors.js';
import { Runtime } from '../runtime/index.js';
import { meilisearchConnection } from '../runtime/backends.js';

/** `notary index rebuild`: the whole index again from the stored passages, swapped in complete. */
export async function indexRebuildCommand(cfg: NotaryConfig): Promise<void> {
  const ctx = await Runtime.open(cfg);
  try {
    const started = performance.now();
    const written = await ctx.rebuildIndex((n) => process.stderr.write(`\rindexed ${n} passages`));
    process.stderr.write('\n');
    process.stdout.write(`rebuilt the ${cfg.indexer.backend} index: ${written} passages in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  } finally {
    await ctx.close();
  }
}

/** `notary index search-key`: creates (once) and prints the Meilisearch key API nodes search with. */
export async function indexSearchKeyCommand(cfg: NotaryConfig): Promise<void> {
  if (cfg.indexer.backend !== 'meilisearch') throw new NotaryError('invalid_config', 'indexer.backend is not meilisearch: there is no search key to make');
  const connection = meilisearchConnection(cfg);
  await connection.ensureIndex();
  const { key, uid } = await connection.searchKey();
  process.stderr.write(`search-only key ${uid} (actions: search, documents.get on ${cfg.indexer.meilisearch.index}); give it to API nodes as NOTARY_MEILISEARCH_API_KEY\n`);
  process.stdout.write(`${key}\n`);
}
