import { NotaryError } from '../../core/index.js';
import type { ReceiptKeyring } from './keyring.js';
import type { ReceiptLog } from './log.js';
import { buildUnsignedReceipt, formatIssuedAt, parseIssuedAt, receiptSigningInput, type NotaryReceipt, type ReceiptClaim } from './receipt.js';
import { formatSignature } from '../crypto/ed25519.js';
import './errors.js'; // registers the receipt error codes this file throws

export const NOTARY_SIGN_HEADER = 'x-notary-sign';

/**
 * `X-Notary-Sign`: absent means no receipt; `required` (any case, surrounding spaces ignored) asks for one; any
 * other value, or the header sent twice, is a 400 `invalid_notary_sign` (checked before any work or charge).
 */
export function parseNotarySignHeader(value: string | string[] | undefined): boolean {
  if (value === undefined) return false;
  if (Array.isArray(value)) throw new NotaryError('invalid_notary_sign', 'X-Notary-Sign was sent more than once; send it once, as X-Notary-Sign: required');
  if (value.trim().toLowerCase() === 'required') return true;
  throw new NotaryError('invalid_notary_sign', `X-Notary-Sign must be "required", got ${JSON.stringify(value.slice(0, 64))}`);
}

export interface IssueReceiptInput {
  claim: ReceiptClaim;
  /** Credits charged for the call. */
  credits: number;
  requestId: string;
  /** The exact request body bytes as received. */
  requestBody: Uint8Array;
  /** The request salt ({@link newRequestSalt}) the response will carry as `notary_request_salt`. */
  requestSalt: string;
  /** The response body exactly as it will be sent, without `notary_receipt` and `notary_request_salt`. */
  responseBody: Record<string, unknown>;
}

export interface ReceiptIssuerOptions {
  /** The `issuer` of every receipt: the service's public base URL. */
  issuer: string;
  keyring: ReceiptKeyring;
  log: ReceiptLog;
  now?: () => Date;
}

/**
 * Signs a receipt for a settled call and appends it to the log in one step. Framework-free: the paid-route context
 * calls `ready()` before the work (so a broken key fails the call before it is charged) and `issue()` after
 * settlement.
 */
export class ReceiptIssuer {
  readonly issuer: string;
  private readonly keyring: ReceiptKeyring;
  private readonly log: ReceiptLog;
  private readonly now: () => Date;

  constructor(options: ReceiptIssuerOptions) {
    this.issuer = options.issuer;
    this.keyring = options.keyring;
    this.log = options.log;
    this.now = options.now ?? (() => new Date());
  }

  /** Throws receipt_key_invalid / receipt_key_insecure when receipts cannot be signed right now. */
  ready(): void {
    this.keyring.current();
  }

  /** Signs and appends to the log in one step. */
  async issue(input: IssueReceiptInput): Promise<NotaryReceipt> {
    const receipt = this.sign(input);
    await this.log.append(receipt);
    return receipt;
  }

  /**
   * Signs without appending, for the paid-call path: it signs before the charge (a failure then costs nothing) and
   * appends with {@link ReceiptLog.append} once the charge went through.
   */
  sign(input: IssueReceiptInput): NotaryReceipt {
    const key = this.keyring.current();
    const issuedAt = this.now();
    const seconds = parseIssuedAt(formatIssuedAt(issuedAt)) ?? Number.NaN;
    if (!key.isValidAt(seconds)) {
      // A clock set before the key's creation would produce receipts no verifier accepts.
      throw new NotaryError('receipt_key_invalid', `the current receipt key ${key.kid} is not valid at ${formatIssuedAt(issuedAt)} (clock skew?)`);
    }
    const unsigned = buildUnsignedReceipt({
      issuer: this.issuer,
      issuedAt,
      claim: input.claim,
      credits: input.credits,
      kid: key.kid,
      requestId: input.requestId,
      requestBody: input.requestBody,
      requestSalt: input.requestSalt,
      responseBody: input.responseBody,
    });
    return { ...unsigned, signature: formatSignature(key.sign(receiptSigningInput(unsigned))) };
  }
}
