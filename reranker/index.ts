export type { Reranker, RerankerInfo, ScorerKind } from './reranker.js';
export type { Embedder } from './embedder.js';
export { BertPairTokenizer, longestFirstLengths, type EncodedInput } from './tokenizer.js';
export { OnnxReranker, type GraphOptimizationLevel, type OnnxRerankerOptions } from './onnx-reranker.js';
export { PREFERRED_ONNX_FILES, detectModelKind, findOnnxFile, isDynamicallyQuantized, readModelConfig, type OnnxModelKind } from './model-folder.js';
export { LexicalReranker, lexicalTerms } from './lexical.js';
export { clampUnit, cosineToUnit, dot, l2Normalize, meanPoolNormalize, sigmoid } from './pooling.js';
export { PINNED_MODELS, pinnedFileUrl, pinnedModel, type PinnedFile, type PinnedKind, type PinnedModel } from './models.js';
export { activePins } from './pins.js';
export { describeProgress, partialFile, pinDifferences, type DownloadProgress } from './download.js';
export { cachedPinnedDir, ensurePinnedModels, missingModelsLine, neededPins, type PinnedStatus } from './ensure.js';
export {
  downloadPinnedModel,
  isCachedModelComplete,
  loadReranker,
  resolveModelFiles,
  sha256File,
  type DownloadOptions,
  type LoadRerankerOptions,
  type RerankerLog,
} from './resolve.js';
export {
  describeModelFolder,
  failureMarkerFile,
  findInt8Copy,
  forgetDownloadFailure,
  installModelFolder,
  listCachedModels,
  recentDownloadFailure,
  verifyReportedHashes,
  type DownloadFailure,
  type ModelFolder,
} from './model-cache.js';
export { INT8_METHOD, makeInt8Copy, type MadeInt8Copy } from './int8-copy.js';
export { quantizeDynamicInt8, type QuantizeStats } from './quantize-int8.js';
export { PairBatcher, type PairScorer } from './pair-batcher.js';
