import type { NotaryConfig } from '../core/index.js';
import { Runtime } from '../runtime/index.js';

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
