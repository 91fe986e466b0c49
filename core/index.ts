export { CHROMIUM_ARGS } from './chromium.js';
export {
  COLLECTION_NAME_PATTERN,
  DEFAULT_COLLECTION_ID,
  DEFAULT_COLLECTION_NAME,
  collectionIdsOf,
  inCollections,
  isCollectionName,
  parseCollectionIds,
} from './collections.js';
export {
  DECIMAL_PATTERN,
  FEATURES,
  configSection,
  loadConfig,
  modelRunners,
  pricingSchema,
  registerConfigFragments,
  serveWorkers,
  tierSchema,
  type ConfigFragment,
  type ConfigInput,
  type Feature,
  type NotaryConfig,
} from './config.js';
export { registerIndexBackendNames } from './config/schema.js';
export {
  NotaryError,
  allErrorCodes,
  errorEntry,
  isNotaryError,
  orderPluginErrorCodes,
  registerErrorCodes,
  upstreamOutcomeCodes,
  type ErrorCode,
  type ErrorEntry,
} from './errors.js';
export { newId, randomBase62, toBase62 } from './ids.js';
export { endpointOf, waitAtStart } from './start-wait.js';
export {
  EXPANSION_STOPWORDS,
  STOPWORDS,
  comparableText,
  contentWords,
  foldCase,
  identifiers,
  stem,
  terms,
  words,
} from './text.js';
export { hasUnspacedScript, isUnspacedCode, withWordBreaks, withoutWordBreaks, wordSegmenter } from './unspaced.js';
export {
  checkCollectionSettings,
  narrowCollections,
  collectionSettingsOf,
  parseMaxDepthOption,
  parsePricesOption,
  type CollectionSettings,
} from './collections.js';
export { BASE62 } from './ids.js';
export { startAddonWorker, type AddonWorker } from './addon-worker.js';
