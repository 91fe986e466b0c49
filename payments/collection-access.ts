import { NotaryError } from '../core/index.js';
import type { AuthenticatedPayer } from './mode.js';

/** The collection a call reads (resolved from the name it gave, or the default collection). */
export interface CollectionRead {
  id: string;
  name: string;
}

/**
 * Refuses (403 collection_forbidden) a call that reads a collection outside the payer's list, whatever its payment
 * mode: a payer without a list (modes that do not restrict) reads every collection. Runs before any reservation or
 * charge.
 */
export function checkCollectionAccess(payer: Pick<AuthenticatedPayer, 'collections' | 'mode'>, read: CollectionRead): void {
  if (payer.collections === undefined || payer.collections.includes(read.id)) return;
  throw new NotaryError(
    'collection_forbidden',
    `These credentials may not read the collection "${read.name}": name one they may read in "collection", or use credentials created for it (notary keys create --collections ${read.name})`,
    { collection: read.name },
  );
}
