import { errorCodes, NotaryError, type ErrorCode } from '../../../core/errors.js';

export const MPP_REALM = 'notary';

/**
 * An MPP failure: its own code, the party at fault when there is one, and for a 401 the `WWW-Authenticate: MPP`
 * challenge naming the error (RFC 9110 wants one on every 401, also on those raised after the headers were read).
 */
export function mppError(code: ErrorCode, detail: string, party?: string, extra: Record<string, unknown> = {}): NotaryError {
  const members = party === undefined ? extra : { party, ...extra };
  const headers: Record<string, string> = errorCodes[code].status === 401 ? { 'WWW-Authenticate': `MPP realm="${MPP_REALM}", error="${code}"` } : {};
  return new NotaryError(code, detail, members, headers);
}
