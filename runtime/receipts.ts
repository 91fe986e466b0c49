import type { NotaryConfig } from '../core/config.js';
import { receiptSettings, ReceiptKeyring, type SigningKey } from '../payments/receipts/index.js';

/**
 * What the command line uses of signed receipts besides the runtime's own `receipts()`: key rotation on the
 * configured keyring, and the offline verification functions (pure: no storage, no network).
 */
export { auditSavedFiles, jwksAmong, parseJwks, splitSavedResponse, verifyReceipt, type AuditInput, type AuditLine, type ReceiptCheck, type VerificationKey } from '../payments/receipts/index.js';

export function rotateReceiptKey(config: NotaryConfig, now: Date = new Date()): { current: SigningKey; retired: SigningKey | null; file: string } {
  const { keyFile } = receiptSettings(config);
  return { ...ReceiptKeyring.rotate(keyFile, now), file: keyFile };
}
