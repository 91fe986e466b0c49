import {
  checkCollectionSettings,
  collectionSettingsOf,
  isCollectionName,
  parseMaxDepthOption,
  parsePricesOption,
  NotaryError,
} from '../core/index.js';
import type { NotaryConfig } from '../core/index.js';
import { Runtime } from '../runtime/index.js';

/** `notary collections list`: each collection, its id and how many pages it holds. */
export async function collectionsListCommand(cfg: NotaryConfig): Promise<void> {
  const ctx = await Runtime.open(cfg);
  try {
    const collections = await ctx.collections.list();
    const counts = await ctx.collections.pageCounts();
    for (const c of collections) process.stdout.write(`${c.name}  ${c.id}  ${counts.get(c.id) ?? 0} pages  ${c.public ? 'public' : 'private'}  ${settingsText(c)}  created ${c.created_at}\n`);
  } finally {
    await ctx.close();
  }
}

/** `notary collections create <name>`: an empty collection (again with the same name: nothing changes). */
export async function collectionsCreateCommand(cfg: NotaryConfig, name: string, isPublic = false): Promise<void> {
  if (!isCollectionName(name)) {
    throw new NotaryError('invalid_collection', `"${name.slice(0, 80)}": a collection name is 1 to 64 lower-case letters, digits, "-" and "_", starting with a letter or digit`);
  }
  const ctx = await Runtime.open(cfg);
  try {
    const made = await ctx.collections.ensure(name);
    const collection = isPublic ? await ctx.collections.setPublic(made.name, true) : made;
    process.stdout.write(`${collection.name}  ${collection.id}  ${collection.public ? 'public' : 'private'}\n`);
  } finally {
    await ctx.close();
  }
}

/** A collection's own settings as `collections list` shows them. */
function settingsText(row: { credits_by_depth: string | null; max_depth: number | null }): string {
  const own = collectionSettingsOf(row);
  const prices = own.creditsByDepth ? `prices ${own.creditsByDepth.join(',')}` : 'prices default';
  return `${prices}  max depth ${own.maxDepth ?? 'default'}`;
}

export interface CollectionSetOptions {
  public?: boolean;
  private?: boolean;
  /** "1,1,2" or "default". */
  prices?: string;
  /** A whole number or "default". */
  maxDepth?: string;
}

/**
 * `notary collections set <name> [--public|--private] [--prices 1,1,2|default] [--max-depth N|default]`: whether payers
 * without an account may read it, and its own search prices and maximum depth.
 */
export async function collectionsSetCommand(cfg: NotaryConfig, name: string, opts: CollectionSetOptions): Promise<void> {
  if (opts.public === true && opts.private === true) throw new NotaryError('invalid_request', 'say --public or --private, not both');
  if (opts.public === undefined && opts.private === undefined && opts.prices === undefined && opts.maxDepth === undefined) {
    throw new NotaryError('invalid_request', 'say what to change: --public, --private, --prices 1,1,2 (or default), --max-depth N (or default)');
  }
  const settings = {
    ...(opts.prices !== undefined ? { creditsByDepth: parsePricesOption(opts.prices) } : {}),
    ...(opts.maxDepth !== undefined ? { maxDepth: parseMaxDepthOption(opts.maxDepth) } : {}),
  };
  checkCollectionSettings(settings, cfg.search.max_depth);
  const ctx = await Runtime.open(cfg);
  try {
    if (opts.public === true || opts.private === true) await ctx.collections.setPublic(name, opts.public === true);
    const collection = await ctx.collections.setSettings(name, settings);
    process.stdout.write(`${collection.name}  ${collection.id}  ${collection.public ? 'public' : 'private'}  ${settingsText(collection)}\n`);
  } finally {
    await ctx.close();
  }
}

/**
 * `notary collections tenant <tenant> <a,b|all>`: the collections a tenant may read at most: every key it has or
 * makes (dashboard keys included) and its party keys read only those, whatever their own lists say; `all` lifts it.
 */
export async function collectionsTenantCommand(cfg: NotaryConfig, tenantName: string, list: string): Promise<void> {
  const ctx = await Runtime.open(cfg);
  try {
    const tenant = await ctx.accounts.repository.getTenantByName(tenantName);
    if (!tenant) throw new NotaryError('tenant_not_found', `no tenant named "${tenantName}": see notary keys list`);
    const ids = list.trim() === 'all' ? null : await ctx.collections.idsOfList(list);
    await ctx.accounts.updateTenant(tenant.id, { collections: ids });
    const names = ids === null ? 'every collection' : (await ctx.collections.byIds(ids)).map((c) => c.name).join(', ');
    process.stdout.write(`${tenant.name}  reads ${names}\n`);
  } finally {
    await ctx.close();
  }
}
