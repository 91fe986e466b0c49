export { Runtime, type PaymentListRow, type RuntimeOptions } from './runtime.js';
export { openDense, type OpenedDense } from './dense.js';
export { assignScorers, assignmentLines, modelName, type ModelAssignment, type Scorers } from './scorers.js';
export { silentLog, stderrLog, warningsLog, type Log } from './log.js';
export { buildPaidCallGate, buildPaymentModes, type PaidCallGateDeps, type PaymentModeDeps } from './payments.js';
export {
  describeModelFolder,
  failureMarkerFile,
  forgetDownloadFailure,
  installModelFolder,
  isCachedModelComplete,
  listCachedModels,
  modelCacheDir,
  PINNED_MODELS,
  recentDownloadFailure,
  sha256File,
  verifyModelFolder,
  type ModelFolder,
  type VerifyResult,
} from './models.js';
export { installPinnedFrom, pullPinnedModels, type InstallPinnedResult, type PullResult } from './model-fetch.js';
export { activePins, describeProgress, makeInt8Copy, type DownloadProgress } from '../reranker/index.js';
export type { Tenant } from '../storage/index.js';
export { notifyCrawlJobEnded, processOwner, settleCrawlJob, type CrawlJobRow, type CrawlJobStatus, type JobProgress, type JobSettlement } from './crawl-jobs.js';
