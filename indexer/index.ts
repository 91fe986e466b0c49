export type { IndexDoc, IndexHit, IndexSearchOptions, IndexStats, SearchIndex } from './search-index.js';
export { passageModelText } from './search-index.js';
export { isOwnTranslationGroup } from './page-facts.js';
export type { PassageVector, VectorHit, VectorIndex, VectorIndexStats, VectorSearchOptions } from './vector-index.js';
export { cutPassages, type CutOptions, type CutPassage } from './passages.js';
export { Fts5SearchIndex } from './backends/fts5/search-index.js';
export { FTS5_COLUMN_WEIGHTS } from './backends/fts5/ranking.js';
export { toFts5Query } from './backends/fts5/query.js';
export {
  Indexer,
  MAX_PASSAGES_PER_PAGE,
  type IndexerDeps,
  type IndexerLogger,
  type IndexerProgress,
  type IndexerRunResult,
} from './indexer.js';
export { SqlVectorIndex, type SqlVectorIndexOptions } from './sql-vector-index.js';
export { encodeVector, decodeVector } from './vector-encoding.js';
export { indexBackendNamed, type IndexBackend } from './backend-plugin.js';
export { factsPass, hasFactFilter, hostOf, publishedMs, type FactFilter } from './filter-facts.js';
export type { HostRule, IndexFilter, PageDoc, PageHit } from './search-index.js';
export { storedSiteTitles } from './site-titles.js';
export { sqlVectorAnn } from './sql-vector-store.js';
export { defaultVectorStore, registerVectorStores, type VectorStorePlugin, type VectorIndexFactory } from './vector-store-plugin.js';
