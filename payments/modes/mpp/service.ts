import { pluginService } from '../../plugin.js';
import { Parties } from './parties.js';

/** The runtime's party keys (tenants' registered Ed25519 keys): what `notary parties` and the dashboard manage. */
export const mppParties = pluginService('mpp-parties', ({ storage }) => new Parties(storage.db));
