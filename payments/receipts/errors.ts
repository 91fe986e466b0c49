import { registerErrorCodes, type ErrorEntry } from '../../core/index.js';

/** Signed receipts and the receipt log (issue 14). */
export const RECEIPT_ERROR_CODES = {
  invalid_notary_sign: { status: 400, title: 'X-Notary-Sign must be "required"', retryable: false },
  receipt_not_found: { status: 404, title: 'No such receipt in the log at that tree size', retryable: false },
  tree_size_out_of_range: { status: 404, title: 'The tree size is outside the receipt log', retryable: false },
  receipt_key_invalid: { status: 503, title: 'The receipt signing key is missing or corrupted', retryable: false },
  receipt_key_insecure: { status: 503, title: 'The receipt key file is readable by other users', retryable: false },
  receipt_log_corrupt: { status: 503, title: 'The receipt log does not match its published checkpoints', retryable: false },
  receipt_verification_failed: { status: 422, title: 'The receipt did not verify', retryable: false },
} as const satisfies Record<string, ErrorEntry>;

declare module '../../core/errors.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- the members are the table's keys
  interface PluginErrorCodes extends Record<keyof typeof RECEIPT_ERROR_CODES, true> {}
}

registerErrorCodes(RECEIPT_ERROR_CODES);
