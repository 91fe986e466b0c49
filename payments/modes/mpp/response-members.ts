import { countSchema, type ResponseMember } from '../../response-members.js';

/** The most parties an envelope can name (payments.modes.mpp.max_parties is at most 64). */
const MAX_PAYING_PARTIES = 64;

/** MPP: one receipt per paying party, adding up to credits_used. */
const partyReceiptsSchema = {
  type: 'array',
  maxItems: MAX_PAYING_PARTIES,
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['party', 'credits', 'share'],
    properties: { party: { type: 'string' }, credits: countSchema, share: { type: 'string' } },
  },
} as const;

/** What MPP adds to a paid 200 body: one receipt per paying party. */
export const MPP_RESPONSE_MEMBERS: readonly ResponseMember[] = [{ name: 'receipts', order: 30, schema: partyReceiptsSchema }];
