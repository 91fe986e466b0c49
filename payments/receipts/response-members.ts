import { countSchema, type ResponseMember } from '../response-members.js';

/** The signed receipt of `X-Notary-Sign: required` (wire format: ../shared/docs/field-notes.md §5). */
const notaryReceiptSchema = {
  type: 'object',
  additionalProperties: true,
  required: ['issuer', 'issued_at', 'claim', 'credits', 'kid', 'request_id', 'signature'],
  properties: {
    issuer: { type: 'string' },
    issued_at: { type: 'string' },
    claim: { type: 'string' },
    credits: countSchema,
    kid: { type: 'string' },
    request_id: { type: 'string' },
    request_digest: { type: 'string' },
    response_digest: { type: 'string' },
    signature: { type: 'string' },
  },
} as const;

/** What signed receipts add to a paid 200 body: the receipt, and the salt its request digest is keyed with. */
export const RECEIPT_RESPONSE_MEMBERS: readonly ResponseMember[] = [
  {
    name: 'notary_request_salt',
    order: 50,
    schema: { type: 'string', description: 'With notary_receipt: the salt its request_digest is keyed with (HMAC-SHA-256). Keep it with the request body to prove the request later; the public log never holds it.' },
  },
  { name: 'notary_receipt', order: 51, schema: notaryReceiptSchema },
];
