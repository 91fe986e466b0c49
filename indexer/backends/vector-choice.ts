import type { NotaryConfig } from '../../core/index.js';
import type { Storage } from '../../storage/index.js';
import type { BackendLog } from '../backend-plugin.js';
import type { VectorIndex } from '../vector-index.js';
import { defaultVectorStore, type VectorIndexFactory } from '../vector-store-plugin.js';

/** The value of a backend's `vectors` setting that keeps its passage vectors in the service database's vector store. */
export const SERVICE_VECTORS = 'service';

/**
 * Where a backend with a vector store of its own keeps passage vectors (issue 34): its own store, or the service
 * database's (the first registered vector store, as for a backend without one). Switching on an index whose vectors
 * are in the other store says so at open: the vectors are not moved, passages are embedded again into the chosen
 * store (what `notary serve` does in the background and `notary crawl` before it ends), and dense results are
 * partial until then.
 */
export function chosenVectorStore(options: {
  /** The setting, e.g. `indexer.<backend>.vectors`, and its value. */
  setting: string;
  value: string;
  /**
   * The backend's own value of the setting and its store: `open` makes what the store needs (an engine's embedder, a
   * table), `peek` only reads (for the switch check; failing there counts as no vectors).
   */
  own: { value: string; open: VectorIndexFactory; peek: VectorIndexFactory };
  deps: { config: NotaryConfig; storage: Storage; log?: BackendLog | undefined };
}): VectorIndexFactory {
  const { config, storage, log } = options.deps;
  const service: VectorIndexFactory = (model) => defaultVectorStore().open(config, storage, log)(model);
  const [chosen, other, otherValue] = options.value === SERVICE_VECTORS ? [service, options.own.peek, options.own.value] : [options.own.open, service, SERVICE_VECTORS];
  return async (model) => {
    const index = await chosen(model);
    try {
      const warning = await switchWarning(index, () => other(model), { ...options, otherValue });
      if (warning) (log ?? ((_level, message) => process.stderr.write(`WARNING: ${message}\n`)))('warn', warning);
    } catch (err) {
      await index.close();
      throw err;
    }
    return index;
  };
}

/** The warning when the chosen store lacks vectors the other store holds for this model; null when it lacks none. */
async function switchWarning(
  index: VectorIndex,
  openOther: () => Promise<VectorIndex>,
  options: { setting: string; value: string; otherValue: string },
): Promise<string | null> {
  if ((await index.missing(1)).length === 0) return null;
  let other: VectorIndex;
  try {
    other = await openOther();
  } catch {
    return null; // the other store was never set up here (no engine index, no pgvector table): nothing was left in it
  }
  try {
    const [here, there] = await Promise.all([index.stats(), other.stats().catch(() => null)]);
    if (!there || there.vectors <= here.vectors) return null;
    return (
      `${options.setting} is ${options.value}, but ${there.vectors} passages have a vector of ${index.model} in the ${options.otherValue} store and ${here.vectors} in ` +
      `the ${options.value} store (${index.name}): vectors are not moved between stores. Passages are embedded again into the ${options.value} store ` +
      `(notary serve does it in the background, notary crawl before it ends) and dense results are partial until then; ` +
      `to search the vectors already made, set ${options.setting} back to ${options.otherValue}`
    );
  } finally {
    await other.close();
  }
}
