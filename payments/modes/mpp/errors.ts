import { errorEntry, NotaryError, registerErrorCodes, type ErrorCode, type ErrorEntry } from '../../../core/index.js';

/**
 * MPP (Authorization: MPP envelope=...): each failure of an envelope has its own code; `party` names the party at
 * fault. Then the party keys (notary parties ..., the dashboard's MPP page).
 */
export const MPP_ERROR_CODES = {
  mpp_envelope_encoding: { status: 400, title: 'The MPP envelope is not base64url', retryable: false },
  mpp_envelope_json: { status: 400, title: 'The MPP envelope is not a UTF-8 JSON object', retryable: false },
  mpp_envelope_invalid: { status: 400, title: 'The MPP envelope lacks a member, has one of the wrong form, or one it should not', retryable: false },
  mpp_version_unsupported: { status: 400, title: 'The MPP envelope version is not supported', retryable: false },
  mpp_duplicate_party: { status: 400, title: 'A party appears twice in the MPP envelope', retryable: false },
  mpp_share_malformed: { status: 400, title: 'A share is not a decimal string with at most 6 decimals', retryable: false },
  mpp_shares_not_one: { status: 400, title: 'The shares of the MPP envelope do not sum to exactly 1', retryable: false },
  mpp_too_many_parties: { status: 400, title: 'The MPP envelope lists more parties than this service allows', retryable: false },
  mpp_missing_authorization: { status: 401, title: 'A party of the MPP envelope did not sign it', retryable: false },
  mpp_bad_signature: { status: 401, title: "A party's signature of the MPP envelope does not verify", retryable: false },
  mpp_unknown_party: { status: 401, title: 'A party of the MPP envelope is not known', retryable: false },
  mpp_unknown_key: { status: 401, title: "A party's kid is not one of its registered keys", retryable: false },
  mpp_key_revoked: { status: 401, title: "A party's key was revoked", retryable: false },
  mpp_method_mismatch: { status: 401, title: "The MPP envelope's htm is not the request method", retryable: false },
  mpp_url_mismatch: { status: 401, title: "The MPP envelope's htu is not the request URL", retryable: false },
  mpp_body_digest_mismatch: { status: 401, title: "The MPP envelope's body_digest is not the digest of the request body", retryable: false },
  mpp_envelope_expired: { status: 401, title: 'The MPP envelope has expired', retryable: false },
  mpp_issued_in_future: { status: 401, title: 'The MPP envelope is issued in the future', retryable: false },
  mpp_expiry_too_far: { status: 401, title: 'The MPP envelope expires too far ahead', retryable: false },
  mpp_nonce_replayed: { status: 401, title: "The MPP envelope's nonce was used before", retryable: false },
  mpp_total_below_price: { status: 402, title: "The MPP envelope's total_credits do not cover the price of this call", retryable: false },
  invalid_public_key: { status: 400, title: 'The public key is not a base64url Ed25519 key of 32 bytes', retryable: false },
  party_key_exists: { status: 409, title: 'This public key is registered already', retryable: false },
  party_key_not_found: { status: 404, title: 'No such party key', retryable: false },
} as const satisfies Record<string, ErrorEntry>;

declare module '../../../core/errors.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- the members are the table's keys
  interface PluginErrorCodes extends Record<keyof typeof MPP_ERROR_CODES, true> {}
}

registerErrorCodes(MPP_ERROR_CODES);

export const MPP_REALM = 'notary';

/**
 * An MPP failure: its own code, the party at fault when there is one, and for a 401 the `WWW-Authenticate: MPP`
 * challenge naming the error (RFC 9110 wants one on every 401, also on those raised after the headers were read).
 */
export function mppError(code: ErrorCode, detail: string, party?: string, extra: Record<string, unknown> = {}): NotaryError {
  const members = party === undefined ? extra : { party, ...extra };
  const headers: Record<string, string> = errorEntry(code).status === 401 ? { 'WWW-Authenticate': `MPP realm="${MPP_REALM}", error="${code}"` } : {};
  return new NotaryError(code, detail, members, headers);
}
