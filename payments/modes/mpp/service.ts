import { CollectionStore } from '../../../storage/index.js';
import { pluginService } from '../../plugin.js';
import { Parties } from './parties.js';

/** The runtime's party keys (tenants' registered Ed25519 keys): what `notary parties` and the dashboard manage. */
export const mppParties = pluginService('mpp-parties', ({ storage }) => new Parties(storage.db));

/** The collections a party key may be limited to (the dashboard names them; stored as ids). */
export const mppCollections = pluginService('mpp-collections', ({ storage }) => new CollectionStore(storage.db));
