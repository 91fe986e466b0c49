import type { NotaryConfig } from '../core/index.js';
import { endpointOf, waitAtStart } from '../core/index.js';
import type { Storage } from '../storage/index.js';

/** Whether the database answers a query (GET /readyz's `database`). */
export function databaseAnswers(storage: Storage): Promise<boolean> {
  return storage.db
    .selectFrom('pages')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('id', '=', -1)
    .execute()
    .then(() => true, () => false);
}

/**
 * For `notary serve`: waits (server.start_wait_ms) for the shared stores (Redis) to answer and fails with the
 * setting to fix. PostgreSQL and the index backend's server are waited for when the runtime opens; a runtime
 * without its Redis still opens (its /readyz says so), so a Redis that goes away later is a 503, not a crash.
 */
export async function waitForSharedStores(config: NotaryConfig, ready: () => Promise<boolean>): Promise<void> {
  const url = config.stores.backend === 'redis' ? config.stores.redis_url : undefined;
  if (!url) return;
  await waitAtStart({ what: `Redis at ${endpointOf(url)}`, setting: 'stores.redis_url (NOTARY_REDIS_URL)', waitMs: config.server.start_wait_ms }, async () => {
    if (!(await ready())) throw new Error('no answer to PING');
  });
}
