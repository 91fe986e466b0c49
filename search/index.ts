export { activeCalibrations } from './calibration.js';
export { CrossEncoderStage, crossEncoderStageOptions } from './cross-encoder.js';
export {
  MAX_HIGHLIGHTS,
  searchOptions,
  searchOptionsSchema,
  type SearchOptions,
  type SearchOptionsBody,
} from './options.js';
export { SearchPipeline } from './pipeline.js';
export { logRewriterFailures, queryRewriterFromConfig, type QueryRewriter } from './query-rewriter.js';
export { normalizeQuery } from './query.js';
export type { DenseRetrieval } from './request-state.js';
export type { SearchResultItem, SearchService } from './service.js';
export type { SearchPipelineOptions } from './tuning.js';
