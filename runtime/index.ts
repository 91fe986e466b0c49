export { Runtime, type RuntimeOptions } from './runtime.js';
export { openDense, type OpenedDense } from './dense.js';
export { silentLog, stderrLog, warningsLog, type Log } from './log.js';
export { buildPaidCallGate, buildPaymentModes, type PaidCallGateDeps, type PaymentModeDeps } from './payments.js';
export * from './receipts.js';
