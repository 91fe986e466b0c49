import { registerErrorCodes, type ErrorEntry } from '../../../core/index.js';

/** API keys (Authorization: Bearer sk_live_...). */
export const API_KEY_ERROR_CODES = {
  invalid_api_key: { status: 401, title: 'The API key is not valid', retryable: false },
  revoked_api_key: { status: 401, title: 'The API key has been revoked', retryable: false },
  expired_api_key: { status: 401, title: 'The API key has expired', retryable: false },
} as const satisfies Record<string, ErrorEntry>;

declare module '../../../core/errors.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- the members are the table's keys
  interface PluginErrorCodes extends Record<keyof typeof API_KEY_ERROR_CODES, true> {}
}

registerErrorCodes(API_KEY_ERROR_CODES);
