import { sql, type Kysely } from 'kysely';
import { DEFAULT_COLLECTION_ID, NotaryError, newId, parseCollectionIds } from '../core/index.js';
import { nowIso } from './db.js';
import type { Collection, Database } from './schema.js';

/**
 * The collections table and page membership (issue 33). A page with no membership row belongs to the default
 * collection (the migration put every page stored before it there; tools that store pages without naming one too).
 */
/**
 * How long `resolve` trusts an answer: another process may add a collection (a count of one no longer holds) or change
 * one's own prices, maximum depth or visibility (the dashboard, `notary collections set`) meanwhile; this store's own
 * writes forget its answers at once.
 */
export const COLLECTION_TTL_MS = 1_000;

export class CollectionStore {
  /** `resolve`'s answers by name (existing names only), each for COLLECTION_TTL_MS. */
  private readonly resolved = new Map<string, { found: { collection: Collection; total: number }; at: number }>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => number = () => Date.now(),
  ) {}

  async list(): Promise<Collection[]> {
    return this.db.selectFrom('collections').selectAll().orderBy('created_at').orderBy('name').execute();
  }

  async byName(name: string): Promise<Collection | undefined> {
    return this.db.selectFrom('collections').selectAll().where('name', '=', name).executeTakeFirst();
  }

  /** The collections with these names that exist (the others are absent). */
  async byNames(names: readonly string[]): Promise<Collection[]> {
    if (names.length === 0) return [];
    return this.db.selectFrom('collections').selectAll().where('name', 'in', [...names]).execute();
  }

  /**
   * The ids of comma-separated collection names (a --collections option), every one of which must exist:
   * invalid_collection when none is named, collection_not_found naming the missing ones.
   */
  async idsOfList(list: string): Promise<string[]> {
    const names = [...new Set(list.split(',').map((n) => n.trim()).filter((n) => n.length > 0))];
    if (names.length === 0) throw new NotaryError('invalid_collection', '--collections names no collection: give one or more names, comma-separated');
    return this.idsOfNames(names);
  }

  /** The ids of these collection names, in their order; collection_not_found naming the ones that do not exist. */
  async idsOfNames(names: readonly string[]): Promise<string[]> {
    const found = new Map((await this.byNames(names)).map((c) => [c.name, c.id]));
    const missing = names.filter((name) => !found.has(name));
    if (missing.length > 0) {
      throw new NotaryError('collection_not_found', `no collection named ${missing.map((n) => `"${n}"`).join(', ')}: make it with notary collections create <name> (or notary crawl <url> --collection <name>)`, {
        collections: missing,
      });
    }
    return names.map((name) => found.get(name) ?? '');
  }

  /**
   * The ids of the collections a tenant limits a new key (or party key) to: each must exist (404 collection_not_found)
   * and be one the tenant may read (`tenantLimit`, its stored list; null: every collection), else 403
   * collection_forbidden, so a key never reaches past its tenant's limit.
   */
  async idsWithinTenant(names: readonly string[], tenantLimit: string | null): Promise<string[]> {
    const ids = await this.idsOfNames(names);
    const allowed = parseCollectionIds(tenantLimit);
    const outside = allowed === null ? [] : names.filter((_name, i) => !allowed.includes(ids[i] ?? ''));
    if (outside.length > 0) {
      throw new NotaryError('collection_forbidden', `This tenant may not read ${outside.map((n) => `"${n}"`).join(', ')}: ask the operator (notary collections tenant)`, {
        collection: outside[0],
      });
    }
    return ids;
  }

  /** Collection names of a stored list of ids (null: every collection); ids of deleted collections are left out. */
  async namesOf(stored: string | null): Promise<string[] | null> {
    const ids = parseCollectionIds(stored);
    if (ids === null) return null;
    return (await this.byIds(ids)).map((c) => c.name);
  }

  /** The ids of the collections payers without an account (pay-per-call) may read. */
  async publicIds(): Promise<string[]> {
    const rows = await this.db.selectFrom('collections').select('id').where('public', '=', 1).orderBy('id').execute();
    return rows.map((r) => r.id);
  }

  /** Makes a collection public or private; collection_not_found when there is none of that name. */
  async setPublic(name: string, value: boolean): Promise<Collection> {
    await this.db.updateTable('collections').set({ public: value ? 1 : 0 }).where('name', '=', name).execute();
    this.resolved.clear();
    const found = await this.byName(name);
    if (!found) throw new NotaryError('collection_not_found', `no collection named "${name}": see notary collections list`, { collection: name });
    return found;
  }

  /**
   * Sets a collection's own search prices and maximum depth (null: back to the deployment's; undefined: unchanged);
   * collection_not_found when there is none of that name. Checked by the caller against the price list's rules.
   */
  async setSettings(name: string, settings: { creditsByDepth?: readonly number[] | null; maxDepth?: number | null }): Promise<Collection> {
    const values: { credits_by_depth?: string | null; max_depth?: number | null } = {};
    if (settings.creditsByDepth !== undefined) values.credits_by_depth = settings.creditsByDepth === null ? null : JSON.stringify(settings.creditsByDepth);
    if (settings.maxDepth !== undefined) values.max_depth = settings.maxDepth;
    if (Object.keys(values).length > 0) await this.db.updateTable('collections').set(values).where('name', '=', name).execute();
    this.resolved.clear();
    const found = await this.byName(name);
    if (!found) throw new NotaryError('collection_not_found', `no collection named "${name}": see notary collections list`, { collection: name });
    return found;
  }

  async byIds(ids: readonly string[]): Promise<Collection[]> {
    if (ids.length === 0) return [];
    return this.db.selectFrom('collections').selectAll().where('id', 'in', [...ids]).execute();
  }

  /**
   * A collection by name, and how many collections there are: with one only, every page is in it, so a search of it
   * needs no filter. One query, then remembered for COLLECTION_TTL_MS (a paid call asks for every request), so a
   * change made by another process applies within that time. Unknown names are asked anew.
   */
  async resolve(name: string): Promise<{ collection: Collection; total: number } | undefined> {
    const known = this.resolved.get(name);
    if (known && this.now() - known.at < COLLECTION_TTL_MS) return known.found;
    const row = await this.db
      .selectFrom('collections')
      .selectAll()
      .select((eb) => eb.selectFrom('collections').select((c) => c.fn.countAll<number>().as('n')).as('total'))
      .where('name', '=', name)
      .executeTakeFirst();
    if (!row) return undefined;
    const { total, ...collection } = row;
    const found = { collection, total: Number(total) };
    this.resolved.set(name, { found, at: this.now() });
    return found;
  }

  /** The collection of this name, made when it does not exist yet (by any process: the name is unique). */
  async ensure(name: string): Promise<Collection> {
    await this.db
      .insertInto('collections')
      .values({ id: newId('col'), name, created_at: nowIso() })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
    this.resolved.clear();
    const found = await this.byName(name);
    if (!found) throw new Error(`collection ${name} neither inserted nor found`);
    return found;
  }

  /** Pages per collection id (pages without membership rows count for the default collection). */
  async pageCounts(): Promise<Map<string, number>> {
    const rows = await this.db.selectFrom('page_collections').select(['collection_id', (eb) => eb.fn.countAll<number>().as('n')]).groupBy('collection_id').execute();
    const out = new Map(rows.map((r) => [r.collection_id, Number(r.n)]));
    const loose = await this.db
      .selectFrom('pages')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where((eb) => eb.not(eb.exists(eb.selectFrom('page_collections').select('page_id').whereRef('page_collections.page_id', '=', 'pages.id'))))
      .executeTakeFirst();
    out.set(DEFAULT_COLLECTION_ID, (out.get(DEFAULT_COLLECTION_ID) ?? 0) + Number(loose?.n ?? 0));
    return out;
  }

  /** Each page's collection ids (a page without rows: the default collection). */
  async ofPages(pageIds: readonly number[]): Promise<Map<number, string[]>> {
    const out = new Map<number, string[]>();
    for (const id of pageIds) out.set(id, []);
    for (let i = 0; i < pageIds.length; i += 500) {
      const chunk = pageIds.slice(i, i + 500);
      const rows = await this.db.selectFrom('page_collections').select(['page_id', 'collection_id']).where('page_id', 'in', chunk).orderBy('collection_id').execute();
      for (const row of rows) out.get(Number(row.page_id))?.push(row.collection_id);
    }
    for (const [id, list] of out) if (list.length === 0) out.set(id, [DEFAULT_COLLECTION_ID]);
    return out;
  }
}

/**
 * Puts the stored page at `url` in a collection, inside the caller's transaction (the crawler's page write). A page
 * that joins a collection it was not in is indexed again, so its index entries and vectors carry the new membership.
 */
export async function joinCollection(db: Kysely<Database>, url: string, collectionId: string): Promise<void> {
  // A page indexed without membership rows is in the default collection: that stays recorded.
  if (collectionId !== DEFAULT_COLLECTION_ID) {
    await sql`insert into page_collections (page_id, collection_id)
      select p.id, ${DEFAULT_COLLECTION_ID} from pages p
      where p.url = ${url} and p.state = 'indexed' and not exists (select 1 from page_collections pc where pc.page_id = p.id)`.execute(db);
  }
  const inserted = await sql`insert into page_collections (page_id, collection_id)
    select id, ${collectionId} from pages where url = ${url}
    on conflict do nothing`.execute(db);
  if (Number(inserted.numAffectedRows ?? 0n) > 0) {
    await db.updateTable('pages').set({ state: 'fetched' }).where('url', '=', url).where('state', '=', 'indexed').execute();
  }
}
