import { registerErrorCodes, type ErrorEntry } from '../../../core/index.js';

/** x402 pay-per-call (PAYMENT-SIGNATURE and X-402-Receipt). Nothing is settled when any of these is answered. */
export const X402_ERROR_CODES = {
  x402_malformed_payment: { status: 400, title: 'The PAYMENT-SIGNATURE header is not valid base64 JSON of an x402 v2 payment', retryable: false },
  x402_malformed_receipt: { status: 400, title: 'The X-402-Receipt header is not a well-formed settlement receipt', retryable: false },
  x402_unsupported: { status: 400, title: 'This x402 version, scheme or payload type is not accepted here', retryable: false },
  x402_wrong_network: { status: 402, title: 'The payment is for another network', retryable: false },
  x402_wrong_asset: { status: 402, title: 'The payment is in another asset', retryable: false },
  x402_wrong_pay_to: { status: 402, title: 'The payment goes to another address', retryable: false },
  x402_amount_too_low: { status: 402, title: 'The payment is less than the price of this call', retryable: false },
  x402_amount_mismatch: { status: 402, title: 'The exact scheme pays exactly the quoted amount', retryable: false },
  x402_challenge_missing: { status: 402, title: 'The payment does not name the challenge it answers', retryable: false },
  x402_challenge_invalid: { status: 402, title: 'The challenge was not issued for this request (method, path, body or price)', retryable: false },
  x402_challenge_expired: { status: 402, title: 'The challenge has expired', retryable: false },
  x402_challenge_used: { status: 402, title: 'The challenge was already paid for by another payment', retryable: false },
  x402_authorization_expired: { status: 402, title: 'The payment authorization has expired or is not valid yet', retryable: false },
  x402_invalid_signature: { status: 402, title: 'The payment signature does not verify', retryable: false },
  x402_insufficient_funds: { status: 402, title: 'The payer does not hold enough of the asset', retryable: false },
  x402_payment_invalid: { status: 402, title: 'The facilitator refused the payment', retryable: false },
  x402_payment_used: { status: 409, title: 'This payment was already used for another call, or is in use by one right now', retryable: false },
  x402_untrusted_receipt: { status: 402, title: 'The settlement receipt is not signed by a trusted facilitator key', retryable: false },
  x402_receipt_expired: { status: 402, title: 'The settlement receipt is too old to redeem', retryable: false },
  x402_settlement_failed: { status: 402, title: 'The payment could not be settled; nothing was charged', retryable: false },
  x402_settlement_pending: { status: 503, title: 'The settlement outcome is not known yet; retry with the same payment, do not pay again', retryable: true },
  x402_facilitator_unavailable: { status: 502, title: 'The payment facilitator could not be reached; nothing was charged', retryable: true },
} as const satisfies Record<string, ErrorEntry>;

declare module '../../../core/errors.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- the members are the table's keys
  interface PluginErrorCodes extends Record<keyof typeof X402_ERROR_CODES, true> {}
}

registerErrorCodes(X402_ERROR_CODES);
