import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest, openPostgres, type Storage } from '../../../storage/db.js';
import { createDatabase, startPostgres, type TestPostgres } from '../../../testkit/postgres.js';
import { vectorHarness } from '../../../testkit/vector-harness.js';
import { searchIndexContract } from '../../search-index.contract.js';
import { vectorIndexContract } from '../../vector-index.contract.js';
import { toTsQuery } from './query.js';
import { PostgresSearchIndex } from './search-index.js';
import { PgVectorIndex } from './vector-index.js';

let server: TestPostgres;
let shared: Storage;
beforeAll(async () => {
  server = await startPostgres();
  shared = openPostgres(await createDatabase(server.url, `fts_${process.pid}`));
  await migrateToLatest(shared);
}, 120_000);
afterAll(async () => {
  await shared?.close();
  server?.stop();
});

let counter = 0;

searchIndexContract('postgres-fts', async () => PostgresSearchIndex.open(shared, { table: `fts_contract_${counter++}` }));

vectorIndexContract('pgvector-hnsw', async () => {
  const url = await createDatabase(server.url, `pgvector_${process.pid}_${counter++}`);
  return vectorHarness(() => openPostgres(url), (storage, options) => PgVectorIndex.open(storage, options));
});

describe('toTsQuery', () => {
  it('keeps words only, drops stopwords, ORs the rest, and adds identifiers as phrases', () => {
    expect(toTsQuery('How do I "create" an INDEX* (NEAR:x)')).toBe('create | index | near | x | (near <-> x)');
    expect(toTsQuery('lc_numeric setting')).toBe('lc | numeric | setting | (lc <-> numeric)');
    expect(toTsQuery("'; DROP TABLE passages; --")).toBe('drop | table | passages');
    expect(toTsQuery('Café')).toBe('cafe');
    expect(toTsQuery(' !&|:*() ')).toBeNull();
  });
});

describe('PostgresSearchIndex', () => {
  it('finds an identifier through its parts and its phrase', async () => {
    const index = await PostgresSearchIndex.open(shared, { table: `fts_ident_${counter++}` });
    await index.upsert([
      { id: 1, pageId: 1, url: 'http://a.test/1', title: 'Precision', headingPath: '', text: 'numeric precision and numeric scale; lc of a numeric column' },
      { id: 2, pageId: 2, url: 'http://a.test/2', title: 'Client defaults', headingPath: '', text: 'lc_numeric sets the locale of numbers' },
      ...Array.from({ length: 8 }, (_, i) => ({ id: 10 + i, pageId: 10 + i, url: `http://a.test/${10 + i}`, title: `Topic ${i}`, headingPath: '', text: `other settings ${i}` })),
    ]);
    // BM25 scores the identifier as a phrase of its own, as FTS5 does: the passage holding it exactly comes first,
    // above one full of one of its parts; and the phrase's idf counts only the rows holding the phrase.
    expect((await index.search('lc_numeric', { limit: 5 })).map((h) => h.id)).toEqual([2, 1]);
    await index.upsertPages([
      { pageId: 1, url: 'http://a.test/1', title: 'Precision', headings: '', text: 'numeric precision and numeric scale; lc of a numeric column' },
      { pageId: 2, url: 'http://a.test/2', title: 'Client defaults', headings: '', text: 'lc_numeric sets the locale of numbers' },
      ...Array.from({ length: 8 }, (_, i) => ({ pageId: 10 + i, url: `http://a.test/${10 + i}`, title: `Topic ${i}`, headings: '', text: `other settings ${i}` })),
    ]);
    expect((await index.searchPages('lc_numeric', { limit: 5 })).map((h) => h.pageId)).toEqual([2, 1]);
    // A phrase with a stopword inside and a repeated word still matches its exact occurrences only.
    await index.upsert([{ id: 3, pageId: 3, url: 'http://a.test/3', title: 'To char', headingPath: '', text: 'to_char to_char formats; char to text' }]);
    expect((await index.search('to_char', { limit: 5 }))[0]?.id).toBe(3);
  });

  it('opens from several processes at once (the schema is created once)', async () => {
    const table = `fts_race_${counter++}`;
    const opened = await Promise.all(Array.from({ length: 4 }, () => PostgresSearchIndex.open(shared, { table })));
    await opened[0]!.upsert([{ id: 1, pageId: 1, url: 'http://a.test/', title: 'T', headingPath: '', text: 'wal archiving' }]);
    expect((await opened[3]!.search('archive', { limit: 5 })).map((h) => h.id)).toEqual([1]);
  });

  it('rebuilds in one transaction: a reader sees the old rows until the new ones are complete', async () => {
    const index = await PostgresSearchIndex.open(shared, { table: `fts_rebuild_${counter++}` });
    await index.upsert([{ id: 1, pageId: 1, url: 'http://a.test/1', title: 'Old', headingPath: '', text: 'checkpoint tuning' }]);
    let during: number[] = [];
    async function* batches() {
      yield [{ id: 10, pageId: 2, url: 'http://a.test/10', title: 'New', headingPath: '', text: 'checkpoint spreading' }];
      during = (await index.search('checkpoint', { limit: 5 })).map((h) => h.id);
    }
    expect(await index.rebuild(batches())).toBe(1);
    expect(during).toEqual([1]);
    expect((await index.search('checkpoint', { limit: 5 })).map((h) => h.id)).toEqual([10]);
  });

  it('ranks by BM25: a rare query word outweighs a common one (ts_rank, without idf, does not)', async () => {
    const docs = [
      { id: 1, pageId: 1, url: 'http://a.test/1', title: 'Vacuum', headingPath: '', text: 'vacuum vacuum vacuum reclaims storage; vacuum often' },
      { id: 2, pageId: 2, url: 'http://a.test/2', title: 'Old rows', headingPath: '', text: 'old rows are frozen; freeze ages' },
      ...Array.from({ length: 8 }, (_, i) => ({ id: 10 + i, pageId: 10 + i, url: `http://a.test/${10 + i}`, title: `Topic ${i}`, headingPath: '', text: `vacuum and topic ${i} details` })),
    ];
    const bm25 = await PostgresSearchIndex.open(shared, { table: `fts_idf_${counter}` });
    const tsRank = await PostgresSearchIndex.open(shared, { table: `fts_idf_${counter++}`, ranking: 'ts_rank' });
    await bm25.upsert(docs);
    await bm25.upsertPages(docs.map((d) => ({ pageId: d.pageId, url: d.url, title: d.title, headings: d.headingPath, text: d.text })));
    expect((await bm25.search('vacuum freeze', { limit: 3 }))[0]?.id).toBe(2);
    expect((await tsRank.search('vacuum freeze', { limit: 3 }))[0]?.id).toBe(1);
    expect((await bm25.searchPages('vacuum freeze', { limit: 3 }))[0]?.pageId).toBe(2);
  });

  it('keeps document frequencies, token counts and postings equal to a recount through upserts, deletes and a rebuild', async () => {
    const table = `fts_stats_${counter++}`;
    const words = ['wal', 'vacuum', 'index', 'checkpoint', 'replica', 'lock', 'tuple', 'autovacuum'];
    const doc = (id: number, seed: number) => ({
      id,
      pageId: id % 5,
      url: `http://a.test/${id}`,
      title: words[seed % words.length]!,
      headingPath: words[(seed * 3) % words.length]!,
      text: Array.from({ length: 3 + (seed % 7) }, (_, i) => words[(seed + i * i) % words.length]).join(' '),
    });
    const index = await PostgresSearchIndex.open(shared, { table });
    const recount = async () => {
      const terms = await sql<{ term: string; df: number }>`select lexeme as term, count(*)::int as df from ${sql.raw(table)}, unnest(tsv) group by lexeme order by lexeme`.execute(shared.db);
      const totals = await sql<{ docs: number; tokens: number }>`select count(*)::int as docs, coalesce(sum(length(tsv)), 0)::int as tokens from ${sql.raw(table)}`.execute(shared.db);
      const postings = await sql`select u.lexeme as term, id::int as doc, cardinality(array_positions(u.weights, 'A')) as a,
        cardinality(array_positions(u.weights, 'B')) as b, cardinality(array_positions(u.weights, 'C')) as c, length(tsv) as len
        from ${sql.raw(table)}, unnest(tsv) u order by 1, 2`.execute(shared.db);
      return { terms: terms.rows, ...totals.rows[0], postings: postings.rows };
    };
    const kept = async () => {
      const terms = await sql<{ term: string; df: number }>`select term, df from ${sql.raw(`${table}_terms`)} order by term`.execute(shared.db);
      const totals = await sql<{ docs: number; tokens: number }>`select docs::int, tokens::int from ${sql.raw(`${table}_stats`)}`.execute(shared.db);
      const postings = await sql`select term, doc::int as doc, a, b, c, len from ${sql.raw(`${table}_postings`)} where d = 0 order by 1, 2`.execute(shared.db);
      return { terms: terms.rows, ...totals.rows[0], postings: postings.rows };
    };
    await index.upsert(Array.from({ length: 30 }, (_, i) => doc(i, i)));
    await index.upsert(Array.from({ length: 20 }, (_, i) => doc(i * 2, i + 7))); // 15 replaced, 5 new
    await index.delete([1, 3, 5, 99]);
    expect(await kept()).toEqual(await recount());
    async function* batches() {
      yield Array.from({ length: 12 }, (_, i) => doc(100 + i, i * 5));
    }
    await index.rebuild(batches());
    expect(await kept()).toEqual(await recount());
    expect((await kept()).docs).toBe(12);
    // A table indexed before the statistics existed is counted once when opened.
    await sql`drop table ${sql.raw(`${table}_terms`)}, ${sql.raw(`${table}_stats`)}, ${sql.raw(`${table}_postings`)}`.execute(shared.db);
    await PostgresSearchIndex.open(shared, { table });
    expect(await kept()).toEqual(await recount());
    expect((await kept()).postings.length).toBeGreaterThan(12);
  });

  it('scores a search within some pages as the whole-index search does (the same statistics, the same scores)', async () => {
    const index = await PostgresSearchIndex.open(shared, { table: `fts_within_${counter++}` });
    const words = ['vacuum', 'wal', 'checkpoint', 'replica', 'lc_numeric', 'lag', 'tuning'];
    await index.upsert(
      Array.from({ length: 60 }, (_, i) => ({
        id: i + 1,
        pageId: (i % 12) + 1,
        url: `http://a.test/${i % 12}`,
        title: words[i % words.length]!,
        headingPath: words[(i * 3) % words.length]!,
        text: Array.from({ length: 2 + (i % 5) }, (_, j) => words[(i + j * j) % words.length]).join(' '),
      })),
    );
    const pageIds = [2, 5, 7];
    for (const query of ['vacuum lag', 'lc_numeric tuning', 'checkpoint replica wal']) {
      const all = await index.search(query, { limit: 100, perPageLimit: 100 });
      const within = await index.search(query, { limit: 100, perPageLimit: 100, filter: { pageIds } });
      expect(within.length).toBeGreaterThan(0);
      expect(within).toEqual(all.filter((h) => pageIds.includes(h.pageId)));
    }
  });

  it('migrates a table made before the postings and the Porter configuration: opened again, it ranks as a freshly built one does', async () => {
    const docs = Array.from({ length: 40 }, (_, i) => ({
      id: i + 1,
      pageId: (i % 7) + 1,
      url: `http://a.test/${i % 7}`,
      title: ['Vacuum', 'WAL', 'Checkpoints', 'Replication'][i % 4]!,
      headingPath: i % 3 === 0 ? 'Tuning' : '',
      text: `${'vacuum '.repeat(i % 5)}wal segments ${'checkpoint '.repeat(i % 3)}replica lag ${i}${i % 4 === 1 ? ' generalization in postgresql.conf' : ''}`,
    }));
    const pages = [1, 2, 3, 4, 5, 6, 7].map((p) => ({ pageId: p, url: `http://a.test/${p - 1}`, title: `Page ${p}`, headings: 'Tuning', text: docs.filter((d) => d.pageId === p).map((d) => d.text).join(' ') }));
    const fresh = await PostgresSearchIndex.open(shared, { table: `fts_fresh_${counter++}` });
    await fresh.upsert(docs);
    await fresh.upsertPages(pages);
    // The old schema: vectors by the old configuration (Snowball English stems, stopwords dropped, the parser's own
    // tokens), the statistics filled by the old triggers, and no postings.
    const table = `fts_old_${counter++}`;
    const old = await PostgresSearchIndex.open(shared, { table });
    const hadOldConfig = await sql<{ n: number }>`select count(*)::int as n from pg_ts_config where cfgname = 'notary_english'`.execute(shared.db);
    if (hadOldConfig.rows[0]?.n === 0) {
      await sql`create text search configuration notary_english (copy = english)`.execute(shared.db);
      await sql`alter text search configuration notary_english alter mapping for hword, hword_part, word with unaccent, english_stem`.execute(shared.db);
    }
    const oldVector = (columns: string[]) =>
      sql.raw(columns.map((c, i) => `setweight(to_tsvector('notary_english', ${c}), '${'ABCD'[i]}')`).join(' || '));
    for (const [t, columns] of [
      [table, ['title', 'heading_path', 'body']],
      [`${table}_pages`, ['title', 'headings', 'path_words', 'body']],
    ] as const) {
      await sql`alter table ${sql.raw(t)} drop column tsv`.execute(shared.db);
      await sql`alter table ${sql.raw(t)} add column tsv tsvector generated always as (${oldVector([...columns])}) stored`.execute(shared.db);
      await sql`drop table ${sql.raw(`${t}_postings`)}`.execute(shared.db);
      for (const event of ['insert', 'update', 'delete']) {
        await sql`create or replace function ${sql.raw(`${t}_stats_${event}`)}() returns trigger language plpgsql as $$ begin return null; end $$`.execute(shared.db);
      }
    }
    await old.upsert(docs);
    await old.upsertPages(pages);
    await sql`delete from ${sql.raw(`${table}_stats`)}`.execute(shared.db); // counted again when opened, as before
    await sql`delete from ${sql.raw(`${table}_pages_stats`)}`.execute(shared.db);
    const migrated = await PostgresSearchIndex.open(shared, { table });
    for (const query of ['vacuum checkpoint', 'replica lag tuning', 'wal', 'generalization', 'postgresql.conf']) {
      const want = await fresh.search(query, { limit: 10, perPageLimit: 2 });
      expect(want.length).toBeGreaterThan(0);
      expect(await migrated.search(query, { limit: 10, perPageLimit: 2 })).toEqual(want);
      expect(await migrated.searchPages(query, { limit: 5 })).toEqual(await fresh.searchPages(query, { limit: 5 }));
    }
    // And its triggers keep the postings from then on.
    await migrated.delete([1, 2, 3]);
    await fresh.delete([1, 2, 3]);
    expect(await migrated.search('vacuum', { limit: 10 })).toEqual(await fresh.search('vacuum', { limit: 10 }));
  });

  it('gives a table made before the host column its hosts, from the URLs, when opened', async () => {
    const table = `fts_hosts_${counter++}`;
    const index = await PostgresSearchIndex.open(shared, { table });
    await index.upsert([
      { id: 1, pageId: 1, url: 'https://user@Docs.Example.com:8443/a?b', title: 'T', headingPath: '', text: 'wal archiving' },
      { id: 2, pageId: 2, url: 'http://other.test/', title: 'T', headingPath: '', text: 'wal archiving' },
    ]);
    await sql`alter table ${sql.raw(table)} drop column host`.execute(shared.db);
    const reopened = await PostgresSearchIndex.open(shared, { table });
    const under = (host: string) => ({ includeHosts: [{ host, subdomains: true }] });
    expect((await reopened.search('wal', { limit: 5, filter: under('example.com') })).map((h) => h.id)).toEqual([1]);
    expect((await reopened.search('wal', { limit: 5, filter: under('other.test') })).map((h) => h.id)).toEqual([2]);
  });

  it('refuses SQLite storage with invalid_config', async () => {
    const { openSqlite } = await import('../../../storage/db.js');
    const sqlite = openSqlite(':memory:');
    await expect(PostgresSearchIndex.open(sqlite)).rejects.toMatchObject({ code: 'invalid_config' });
    await expect(PgVectorIndex.open(sqlite, { model: 'm', dimensions: 3 })).rejects.toMatchObject({ code: 'invalid_config' });
    await sqlite.close();
  });
});
