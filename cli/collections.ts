import { isCollectionName, NotaryError } from '../core/index.js';
import type { NotaryConfig } from '../core/index.js';
import { Runtime } from '../runtime/index.js';

/** `notary collections list`: each collection, its id and how many pages it holds. */
export async function collectionsListCommand(cfg: NotaryConfig): Promise<void> {
  const ctx = await Runtime.open(cfg);
  try {
    const collections = await ctx.collections.list();
    const counts = await ctx.collections.pageCounts();
    for (const c of collections) process.stdout.write(`${c.name}  ${c.id}  ${counts.get(c.id) ?? 0} pages  ${c.public ? 'public' : 'private'}  created ${c.created_at}\n`);
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

/** `notary collections set <name> --public|--private`: whether payers without an account may read it. */
export async function collectionsSetCommand(cfg: NotaryConfig, name: string, isPublic: boolean): Promise<void> {
  const ctx = await Runtime.open(cfg);
  try {
    const collection = await ctx.collections.setPublic(name, isPublic);
    process.stdout.write(`${collection.name}  ${collection.id}  ${collection.public ? 'public' : 'private'}\n`);
  } finally {
    await ctx.close();
  }
}
