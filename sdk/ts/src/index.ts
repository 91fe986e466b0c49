export { NotaryClient, apiKey, mpp, x402, SDK_VERSION, type CallOptions, type NotaryClientOptions, type Payment } from './client.js';
export {
  AuthenticationError,
  BadRequestError,
  ConflictError,
  ConnectionError,
  NotaryApiError,
  NotaryError,
  NotFoundError,
  PaymentRequiredError,
  PermissionDeniedError,
  RateLimitError,
  ServerError,
  TimeoutError,
  UnprocessableError,
  retryAfterMs,
} from './errors.js';
export type * from './types.js';
export { verifyReceipt, responseDigest, requestDigestFor, receiptSigningInput, receiptLeaf, parseIssuedAt, RECEIPT_SIGNING_PREFIX, type NotaryReceipt, type ReceiptCheck, type ReceiptVerification, type VerifyReceiptOptions } from './receipts.js';
export { leafHash, nodeHash, rootFromInclusionProof, verifyInclusion, verifyConsistency } from './merkle.js';
export { openCheckpoint, openNote, parseVerifierKey, noteKeyId, type Checkpoint, type VerifierKey } from './checkpoint.js';
export type { LogProofs, LogInfo } from './log.js';
export { jwkThumbprint, jwkPublicKey, type Ed25519Jwk, type Jwks } from './jwk.js';
export { canonicalJson } from './jcs.js';
export { apiKeyChecksum, apiKeyProblem, crc32 } from './api-keys.js';
export {
  buildEnvelope,
  encodeEnvelope,
  envelopeSigningInput,
  equalShares,
  parseShare,
  partyKid,
  signEnvelope,
  splitCredits,
  ENVELOPE_SIGNING_PREFIX,
  type BuildEnvelopeOptions,
  type Envelope,
  type EnvelopeParty,
  type MppParty,
  type UnsignedEnvelope,
} from './mpp.js';
export {
  paymentRequired,
  receiptPayer,
  signExactPayment,
  walletPayer,
  type EvmSigner,
  type PaymentPayload,
  type PaymentRequired,
  type PaymentRequirements,
  type ReceiptPayerOptions,
  type SettleResponse,
  type WalletPayerOptions,
  type X402Challenge,
  type X402Payer,
} from './x402.js';
export { publicKeyFromSeed, randomSeed, signEd25519, verifyEd25519, formatSignature, parseSignature } from './ed25519.js';
export { sha256, sha256Digest, saltedRequestDigest, toBase64, fromBase64, toBase64Url, fromBase64Url, toHex, fromHex } from './encoding.js';
