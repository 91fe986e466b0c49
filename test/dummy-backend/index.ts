import type { Kysely } from 'kysely';
import { z } from 'zod';
import { configSection, type ConfigFragment } from '../../core/config.js';
import { NotaryError, type ErrorEntry } from '../../core/errors.js';
import { queryTerms, terms } from '../../core/text.js';
import type { IndexBackendPlugin } from '../../indexer/backend-plugin.js';
import type { IndexDoc, IndexFilter, IndexHit, IndexSearchOptions, IndexStats, PageDoc, PageHit, SearchIndex } from '../../indexer/search-index.js';
import { factsPass, hostOf, publishedMs } from '../../indexer/filter-facts.js';
import { sqlVectorStore } from '../../indexer/sql-vector-store.js';
import type { MigrationFactory } from '../../storage/migrations.js';
import type { Database } from '../../storage/schema.js';

/**
 * An index backend that exists only in this folder, as a plug-in: passages and pages kept as JSON in its own tables,
 * ranked by a scan with the shared text analysis. It adds a config section with a cross-field rule and a variable, an
 * error code, a migration, a command under `notary index` and the factory of its search index, and touches no shared
 * file: registering it is one line.
 */

const dummyIndexSchema = z
  .object({
    /** How much a title word counts against a body word. */
    title_weight: z.number().positive().default(3),
    heading_weight: z.number().positive().default(2),
    /** The most passages the index takes; more is dummy_index_full. */
    max_documents: z.number().int().positive().default(100_000),
  })
  .prefault({});

export const dummyIndexConfig: ConfigFragment<z.infer<typeof dummyIndexSchema>> = {
  path: ['indexer', 'dummy'],
  schema: dummyIndexSchema,
  refine(section, cfg, issue) {
    if (cfg.indexer.backend === 'dummy' && section.heading_weight > section.title_weight) issue(['heading_weight'], 'must not exceed title_weight');
  },
  env: [{ env: 'NOTARY_DUMMY_INDEX_MAX_DOCUMENTS', path: ['indexer', 'dummy', 'max_documents'], kind: 'int' }],
};

export const DUMMY_INDEX_ERROR_CODES = {
  dummy_index_full: { status: 507, title: 'The dummy index holds indexer.dummy.max_documents passages already', retryable: false },
} as const satisfies Record<string, ErrorEntry>;

declare module '../../core/errors.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- the members are the table's keys
  interface PluginErrorCodes extends Record<keyof typeof DUMMY_INDEX_ERROR_CODES, true> {}
}

type DummyIndexTables = {
  dummy_index_passages: { id: number; page_id: number; doc: string };
  dummy_index_pages: { page_id: number; doc: string };
};

const tablesMigration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('dummy_index_passages')
      .addColumn('id', 'integer', (c) => c.primaryKey())
      .addColumn('page_id', 'integer', (c) => c.notNull())
      .addColumn('doc', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createTable('dummy_index_pages').addColumn('page_id', 'integer', (c) => c.primaryKey()).addColumn('doc', 'text', (c) => c.notNull()).execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('dummy_index_passages').ifExists().execute();
    await db.schema.dropTable('dummy_index_pages').ifExists().execute();
  },
});

type Fields = ReadonlyArray<{ text: string; weight: number }>;

/** BM25-like: each query stem's idf times its saturated, weighted frequency in each field. */
function scoreAll<T>(items: readonly T[], fields: (item: T) => Fields, query: string): Array<{ item: T; score: number }> {
  const wanted = queryTerms(query);
  if (wanted.length === 0) return [];
  const counted = items.map((item) => ({ item, fields: fields(item).map((f) => ({ terms: terms(f.text), weight: f.weight })) }));
  const df = new Map(wanted.map((t) => [t, counted.filter((c) => c.fields.some((f) => f.terms.includes(t))).length]));
  const scored = counted.map(({ item, fields: fs }) => {
    let score = 0;
    for (const t of wanted) {
      const n = df.get(t) ?? 0;
      const idf = Math.log(1 + (items.length - n + 0.5) / (n + 0.5));
      for (const f of fs) {
        const tf = f.terms.filter((x) => x === t).length;
        score += (idf * f.weight * tf) / (tf + 1);
      }
    }
    return { item, score };
  });
  return scored.filter((s) => s.score > 0).sort((a, b) => b.score - a.score);
}

function passes(
  doc: { pageId: number; url: string; language?: string; navigation?: boolean; translationKey?: string; publishedAt?: string | undefined; collections?: readonly string[] },
  filter: IndexFilter = {},
): boolean {
  if (!factsPass(filter, hostOf(doc.url), publishedMs(doc.publishedAt), doc.collections)) return false;
  if (filter.languages && doc.language && !filter.languages.includes(doc.language.split('-')[0] ?? '')) return false;
  if (filter.excludeNavigation && doc.navigation) return false;
  if (filter.pageIds && !filter.pageIds.includes(doc.pageId)) return false;
  if (filter.translationKey !== undefined && doc.translationKey !== filter.translationKey) return false;
  return true;
}

/** The publication date as every backend returns it: an ISO 8601 instant in UTC (absent when unknown). */
function withIsoDate<T extends { publishedAt?: string | undefined }>(doc: T): T {
  const { publishedAt: _given, ...rest } = doc;
  const ms = publishedMs(doc.publishedAt);
  return (ms === null ? rest : { ...rest, publishedAt: new Date(ms).toISOString() }) as T;
}

export class DummySearchIndex implements SearchIndex {
  readonly name = 'dummy';
  private readonly db: Kysely<DummyIndexTables>;

  constructor(db: Kysely<Database>, private readonly settings: z.infer<typeof dummyIndexSchema>) {
    this.db = db.withTables<DummyIndexTables>() as unknown as Kysely<DummyIndexTables>;
  }

  async upsert(docs: readonly IndexDoc[]): Promise<void> {
    if (docs.length === 0) return;
    const { documents } = await this.stats();
    if (documents + docs.length > this.settings.max_documents) {
      throw new NotaryError('dummy_index_full', `the dummy index takes at most ${this.settings.max_documents} passages: raise indexer.dummy.max_documents`);
    }
    for (const doc of docs) {
      const row = { id: doc.id, page_id: doc.pageId, doc: JSON.stringify(withIsoDate(doc)) };
      await this.db.insertInto('dummy_index_passages').values(row).onConflict((oc) => oc.column('id').doUpdateSet(row)).execute();
    }
  }

  async delete(ids: readonly number[]): Promise<void> {
    if (ids.length > 0) await this.db.deleteFrom('dummy_index_passages').where('id', 'in', [...ids]).execute();
  }

  async search(query: string, options: IndexSearchOptions): Promise<IndexHit[]> {
    const docs = (await this.all()).filter((doc) => passes(doc, options.filter));
    const ranked = scoreAll(docs, (d) => [{ text: d.title, weight: this.settings.title_weight }, { text: d.headingPath, weight: this.settings.heading_weight }, { text: d.text, weight: 1 }], query);
    const perPage = new Map<number, number>();
    const hits: IndexHit[] = [];
    for (const { item, score } of ranked) {
      const kept = perPage.get(item.pageId) ?? 0;
      if (options.perPageLimit !== undefined && kept >= options.perPageLimit) continue;
      perPage.set(item.pageId, kept + 1);
      hits.push({ ...item, score });
      if (hits.length >= options.limit) break;
    }
    return hits;
  }

  async upsertPages(pages: readonly PageDoc[]): Promise<void> {
    for (const page of pages) {
      const row = { page_id: page.pageId, doc: JSON.stringify(withIsoDate(page)) };
      await this.db.insertInto('dummy_index_pages').values(row).onConflict((oc) => oc.column('page_id').doUpdateSet(row)).execute();
    }
  }

  async deletePages(pageIds: readonly number[]): Promise<void> {
    if (pageIds.length > 0) await this.db.deleteFrom('dummy_index_pages').where('page_id', 'in', [...pageIds]).execute();
  }

  async searchPages(query: string, options: { limit: number; filter?: IndexFilter }): Promise<PageHit[]> {
    const rows = await this.db.selectFrom('dummy_index_pages').select('doc').orderBy('page_id').execute();
    const pages = rows.map((r) => JSON.parse(r.doc) as PageDoc).filter((page) => passes(page, options.filter));
    const ranked = scoreAll(pages, (p) => [{ text: p.title, weight: this.settings.title_weight }, { text: p.headings, weight: this.settings.heading_weight }, { text: p.text, weight: 1 }], query);
    return ranked.slice(0, options.limit).map(({ item: { headings: _h, text: _t, ...page }, score }) => ({ ...page, score }));
  }

  async get(ids: readonly number[]): Promise<IndexDoc[]> {
    const byId = new Map((await this.all()).map((doc) => [doc.id, doc]));
    return [...new Set(ids)].flatMap((id) => byId.get(id) ?? []);
  }

  async stats(): Promise<IndexStats> {
    const row = await this.db.selectFrom('dummy_index_passages').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return { documents: Number(row.n), bytes: null, backend: this.name };
  }

  async close(): Promise<void> {}

  /** Empties both tables (a rebuild starts here). */
  async clear(): Promise<void> {
    await this.db.deleteFrom('dummy_index_passages').execute();
    await this.db.deleteFrom('dummy_index_pages').execute();
  }

  private async all(): Promise<IndexDoc[]> {
    const rows = await this.db.selectFrom('dummy_index_passages').select('doc').orderBy('id').execute();
    return rows.map((r) => JSON.parse(r.doc) as IndexDoc);
  }
}

export const dummyBackend: IndexBackendPlugin = {
  name: 'dummy',
  config: [dummyIndexConfig],
  errors: DUMMY_INDEX_ERROR_CODES,
  migrations: { '9100_dummy_index': tablesMigration },
  async open({ config, storage, log }) {
    const index = new DummySearchIndex(storage.db, configSection(config, dummyIndexConfig));
    return {
      index,
      vectors: sqlVectorStore(config, storage, log),
      rebuild: async (source, onProgress, pages) => {
        await index.clear();
        let n = 0;
        if (pages) for await (const batch of pages) await index.upsertPages(batch);
        for await (const batch of source) {
          await index.upsert(batch);
          n += batch.length;
          onProgress?.(n);
        }
        return n;
      },
      ready: async () => true,
    };
  },
  cli(index, context) {
    index
      .command('dummy-count')
      .description('the passages the dummy index holds')
      .action(async () => {
        const count = await context.withStorage(async (storage) => (await new DummySearchIndex(storage.db, configSection(context.config(), dummyIndexConfig)).stats()).documents);
        process.stdout.write(`${count} passages in the dummy index\n`);
      });
  },
};
