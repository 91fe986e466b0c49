export { Runtime, type PaymentListRow, type RuntimeOptions } from './runtime.js';
export { buildFacilitator, type BuiltFacilitator } from './facilitator.js';
export { openDense, type OpenedDense } from './dense.js';
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
export * from './receipts.js';
