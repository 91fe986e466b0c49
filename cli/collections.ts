import { isCollectionName } from '../core/collections.js';
import type { NotaryConfig } from '../core/config.js';
import { NotaryError } from '../core/errors.js';
import { Runtime } from '../runtime/index.js';

/** `notary collections list`: each collection, its id and how many pages it holds. */
export async function collectionsListCommand(cfg: NotaryConfig): Promise<void> {
  const ctx = await Runtime.open(cfg);
  try {
    const collections = await ctx.collections.list();
    const counts = await ctx.collections.pageCounts();
    for (const c of collections) process.stdout.write(`${c.name}  ${c.id}  ${counts.get(c.id) ?? 0} pages  created ${c.created_at}\n`);
  } finally {
    await ctx.close();
  }
}

/** `notary collections create <name>`: an empty collection (again with the same name: nothing changes). */
export async function collectionsCreateCommand(cfg: NotaryConfig, name: string): Promise<void> {
  if (!isCollectionName(name)) {
    throw new NotaryError('invalid_collection', `"${name.slice(0, 80)}": a collection name is 1 to 64 lower-case letters, digits, "-" and "_", starting with a letter or digit`);
  }
  const ctx = await Runtime.open(cfg);
  try {
    const collection = await ctx.collections.ensure(name);
    process.stdout.write(`${collection.name}  ${collection.id}\n`);
  } finally {
    await ctx.close();
  }
}
