import type { Kysely } from 'kysely';
import { newId } from '../core/index.js';
import { nowIso } from './db.js';
import type { CrawlSeedRow, Database } from './schema.js';

/** How far from the seed a crawl may go (crawler.scope): its path, host, registrable domain, or anywhere. */
export const SEED_SCOPES = ['path', 'host', 'domain', 'any'] as const;
export type SeedScope = (typeof SEED_SCOPES)[number];

/** Scope rules of one seed, applied over the crawler's config for its crawls. */
export interface SeedOptions {
  include: string[];
  exclude: string[];
  /** null: the config's crawler.scope. */
  scope: SeedScope | null;
  max_depth: number | null;
  max_pages: number | null;
  /** The collection (by name) its pages join, made when new; null: the default collection. */
  collection: string | null;
}

export interface CrawlSeed {
  id: string;
  url: string;
  source: 'config' | 'operator';
  paused: boolean;
  options: SeedOptions;
  recrawl_minutes: number;
  created_at: string;
  updated_at: string;
  crawl_requested_at: string | null;
  last_run_id: string | null;
  last_crawled_at: string | null;
}

export const DEFAULT_SEED_OPTIONS: SeedOptions = { include: [], exclude: [], scope: null, max_depth: null, max_pages: null, collection: null };

function toSeed(row: CrawlSeedRow): CrawlSeed {
  const options = { ...DEFAULT_SEED_OPTIONS, ...(JSON.parse(row.options) as Partial<SeedOptions>) };
  return {
    id: row.id,
    url: row.url,
    source: row.source === 'config' ? 'config' : 'operator',
    paused: row.paused !== 0,
    options,
    recrawl_minutes: row.recrawl_minutes,
    created_at: row.created_at,
    updated_at: row.updated_at,
    crawl_requested_at: row.crawl_requested_at,
    last_run_id: row.last_run_id,
    last_crawled_at: row.last_crawled_at,
  };
}

/** The crawl_seeds table: what the serve-time crawl worker crawls, steered by operators. */
export class CrawlSeedStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** Seeds that are not removed, oldest first. */
  async list(): Promise<CrawlSeed[]> {
    const rows = await this.db.selectFrom('crawl_seeds').selectAll().where('removed_at', 'is', null).orderBy('created_at').orderBy('id').execute();
    return rows.map(toSeed);
  }

  async get(id: string): Promise<CrawlSeed | undefined> {
    const row = await this.db.selectFrom('crawl_seeds').selectAll().where('id', '=', id).where('removed_at', 'is', null).executeTakeFirst();
    return row ? toSeed(row) : undefined;
  }

  /**
   * Adds a seed; a seed removed earlier comes back (with the new settings). Returns undefined when the URL is a live
   * seed already.
   */
  async add(input: { url: string; source: 'config' | 'operator'; options: SeedOptions; recrawlMinutes: number; paused?: boolean }): Promise<CrawlSeed | undefined> {
    const now = nowIso();
    const existing = await this.db.selectFrom('crawl_seeds').selectAll().where('url', '=', input.url).executeTakeFirst();
    if (existing && existing.removed_at === null) return undefined;
    if (existing) {
      await this.db
        .updateTable('crawl_seeds')
        .set({ removed_at: null, source: input.source, options: JSON.stringify(input.options), recrawl_minutes: input.recrawlMinutes, paused: input.paused ? 1 : 0, updated_at: now, crawl_requested_at: now })
        .where('id', '=', existing.id)
        .execute();
      return this.get(existing.id);
    }
    const row: CrawlSeedRow = {
      id: newId('seed'),
      url: input.url,
      source: input.source,
      paused: input.paused ? 1 : 0,
      options: JSON.stringify(input.options),
      recrawl_minutes: input.recrawlMinutes,
      created_at: now,
      updated_at: now,
      removed_at: null,
      crawl_requested_at: null,
      last_run_id: null,
      last_crawled_at: null,
    };
    const inserted = await this.db.insertInto('crawl_seeds').values(row).onConflict((oc) => oc.column('url').doNothing()).returning('id').executeTakeFirst();
    return inserted ? toSeed(row) : undefined;
  }

  /** Adds the config file's seeds that were never seen (a seed an operator removed stays removed). Returns how many. */
  async importConfigSeeds(urls: readonly string[], recrawlMinutes: number): Promise<number> {
    let added = 0;
    for (const url of urls) {
      const known = await this.db.selectFrom('crawl_seeds').select('id').where('url', '=', url).executeTakeFirst();
      if (known) continue;
      if (await this.add({ url, source: 'config', options: DEFAULT_SEED_OPTIONS, recrawlMinutes })) added++;
    }
    return added;
  }

  async update(id: string, patch: { paused?: boolean; options?: SeedOptions; recrawlMinutes?: number }): Promise<CrawlSeed | undefined> {
    const set: Partial<CrawlSeedRow> = { updated_at: nowIso() };
    if (patch.paused !== undefined) set.paused = patch.paused ? 1 : 0;
    if (patch.options !== undefined) set.options = JSON.stringify(patch.options);
    if (patch.recrawlMinutes !== undefined) set.recrawl_minutes = patch.recrawlMinutes;
    await this.db.updateTable('crawl_seeds').set(set).where('id', '=', id).where('removed_at', 'is', null).execute();
    return this.get(id);
  }

  async remove(id: string): Promise<boolean> {
    const result = await this.db.updateTable('crawl_seeds').set({ removed_at: nowIso(), updated_at: nowIso() }).where('id', '=', id).where('removed_at', 'is', null).executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async requestCrawl(id: string): Promise<CrawlSeed | undefined> {
    await this.db.updateTable('crawl_seeds').set({ crawl_requested_at: nowIso() }).where('id', '=', id).where('removed_at', 'is', null).execute();
    return this.get(id);
  }

  /** Live, unpaused seeds that were never crawled, were asked for, or whose recrawl interval has passed. */
  async due(now: Date = new Date()): Promise<CrawlSeed[]> {
    return (await this.list()).filter((seed) => {
      if (seed.paused) return false;
      if (seed.last_crawled_at === null) return true;
      if (seed.crawl_requested_at !== null && seed.crawl_requested_at >= seed.last_crawled_at) return true;
      return Date.parse(seed.last_crawled_at) + seed.recrawl_minutes * 60_000 <= now.getTime();
    });
  }

  async markStarted(id: string, runId: string): Promise<void> {
    await this.db.updateTable('crawl_seeds').set({ last_run_id: runId }).where('id', '=', id).execute();
  }

  async markCrawled(id: string, at: string): Promise<void> {
    await this.db.updateTable('crawl_seeds').set({ last_crawled_at: at }).where('id', '=', id).execute();
  }
}
