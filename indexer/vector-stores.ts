import { sqlVectorStorePlugin } from './sql-vector-store.js';
import { registerVectorStores } from './vector-store-plugin.js';

/** The registered vector stores: one line each; the first is the default. Importing this module registers them. */
export const VECTOR_STORES = registerVectorStores([sqlVectorStorePlugin]);
