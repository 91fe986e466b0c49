import { configSection } from '../../../core/index.js';
import { API_KEY_RESPONSE_MEMBERS } from './response-members.js';
import type { NotaryPlugin } from '../../plugin.js';
import { apiKeyConfigFragment } from './config.js';
import { API_KEY_ERROR_CODES } from './errors.js';
import { apiKeyMode } from './mode.js';

export { apiKeyMode, API_KEY_SECURITY_SCHEME, TEST_MODE_HEADER } from './mode.js';

/** `Authorization: Bearer sk_live_...`: tenants pay from their prepaid credits. */
export const apiKeyPlugin: NotaryPlugin = {
  name: 'api_key',
  config: [apiKeyConfigFragment],
  errors: API_KEY_ERROR_CODES,
  responseMembers: API_KEY_RESPONSE_MEMBERS,
  mode: {
    enabled: (config) => configSection(config, apiKeyConfigFragment).enabled,
    build: (deps) => apiKeyMode(deps.accounts, deps.catalog),
  },
  async ledger(db, { mode }) {
    if (mode !== undefined && mode !== 'api_key') return [];
    const debits = await db
      .selectFrom('credit_ledger')
      .innerJoin('tenants', 'tenants.id', 'credit_ledger.tenant_id')
      .select(['credit_ledger.created_at', 'tenants.name', 'credit_ledger.delta', 'credit_ledger.request_id'])
      .where('credit_ledger.delta', '<', 0)
      .execute();
    return debits.map((d) => ({
      created_at: d.created_at,
      mode: 'api_key',
      payer: d.name,
      amount: String(-d.delta),
      asset: 'credits',
      network: null,
      transaction: null,
      credits: -d.delta,
      request_id: d.request_id,
    }));
  },
};
