import type { Generated, Selectable } from 'kysely';
import type { Timestamp } from '../../../storage/index.js';

export type X402PaymentState =
  /** Verified and held for a call whose work runs; deleted (freed) if the work fails. */
  | 'reserved'
  /** The facilitator was asked to settle. */
  | 'settling'
  /** The settle answered nothing usable (timeout, network): reconciliation on chain decides. */
  | 'unknown'
  | 'settled'
  /** Consumed on chain without the expected transfer (a cancelled authorization): nothing charged, not reusable. */
  | 'void';

export interface X402PaymentsTable {
  id: string;
  /** `signature` (standard PAYMENT-SIGNATURE, settled after the work) or `receipt` (X-402-Receipt, settled before). */
  flow: 'signature' | 'receipt';
  challenge: string;
  /** auth:<network>:<asset>:<payer>:<nonce> or tx:<network>:<transaction>: one row per payment. */
  payment_key: string;
  payer: string;
  network: string;
  asset: string;
  pay_to: string;
  /** Atomic units, as a decimal string. */
  amount: string;
  credits: number;
  auth_nonce: string | null;
  /** The authorization's validBefore (unix seconds, a decimal string: it is a uint256 on chain). */
  valid_before: string | null;
  /** Digest of method, path and body of the call it pays for. */
  fingerprint: string;
  state: X402PaymentState;
  /** 1 once a response was served for it: a payment settled by reconciliation may still serve one retry. */
  served: number;
  transaction_hash: string | null;
  request_id: string;
  lease_until: Timestamp;
  attempts: number;
  last_error: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface PaymentLedgerTable {
  id: Generated<number>;
  mode: string;
  payer: string;
  /** Atomic units of the asset, as a decimal string. */
  amount: string;
  asset: string;
  network: string;
  pay_to: string | null;
  transaction_hash: string | null;
  credits: number;
  request_id: string;
  /** The mode's own id of the payment (x402_payments.id). */
  reference: string | null;
  created_at: Timestamp;
}

export interface ServiceSecretsTable {
  name: string;
  value: string;
  created_at: Timestamp;
}

declare module '../../../storage/schema.js' {
  interface Database {
    x402_payments: X402PaymentsTable;
    payment_ledger: PaymentLedgerTable;
    service_secrets: ServiceSecretsTable;
  }
}

export type X402PaymentRow = Selectable<X402PaymentsTable>;
export type PaymentLedgerRow = Selectable<PaymentLedgerTable>;
