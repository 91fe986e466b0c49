import type { NotaryReceipt } from '../payments/receipts/index.js';

/** Every member of a receipt; each is covered by the signature (or is the signature). */
export const RECEIPT_FIELDS = ['issuer', 'issued_at', 'claim', 'credits', 'kid', 'request_id', 'request_digest', 'response_digest', 'signature'] as const;
export type ReceiptField = (typeof RECEIPT_FIELDS)[number];

/**
 * A copy of the receipt with one byte of one field changed: a number by one, a string at its middle character
 * (digits stay digits and letters stay letters, so formats such as dates and base64 stay well-formed and the
 * refusal comes from the signature, not from a parse error).
 */
export function mutateField(receipt: NotaryReceipt, field: ReceiptField): NotaryReceipt {
  const copy: Record<string, unknown> = { ...receipt };
  const value = copy[field];
  if (typeof value === 'number') {
    copy[field] = value + 1;
  } else if (typeof value === 'string') {
    const i = Math.floor(value.length / 2);
    const ch = value[i] ?? 'a';
    const swapped = /[0-9]/.test(ch) ? String((Number(ch) + 1) % 10) : /[A-Za-z]/.test(ch) ? (ch === 'a' ? 'b' : 'a') : ch === '-' ? '_' : 'a';
    copy[field] = value.slice(0, i) + swapped + value.slice(i + 1);
  }
  return copy as unknown as NotaryReceipt;
}
