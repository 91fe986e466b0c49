import type { ResponseMember } from '../../response-members.js';

/** What the API-key mode adds to a paid 200 body: `test` on a test key's calls. */
export const API_KEY_RESPONSE_MEMBERS: readonly ResponseMember[] = [
  { name: 'test', order: 60, schema: { type: 'boolean', description: 'Present and true when the call was made with a test key (sk_test_): nothing was charged.' } },
];
