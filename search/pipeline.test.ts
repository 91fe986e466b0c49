import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { configSchema, type NotaryConfig } from '../core/config.js';
import { Fts5SearchIndex } from '../indexer/backends/fts5/search-index.js';
import {
  passageModelText,
  type IndexDoc,
  type IndexHit,
  type IndexSearchOptions,
  type IndexStats,
  type PageDoc,
  type PageHit,
  type SearchIndex,
} from '../indexer/search-index.js';
import { LexicalReranker } from '../reranker/lexical.js';
import type { Reranker, RerankerInfo } from '../reranker/reranker.js';
import { SearchPipeline } from './pipeline.js';
import { candidateOrder } from './request-state.js';
import type { SearchOutcome } from './timings.js';
import type { SearchPipelineOptions } from './tuning.js';

const dir = mkdtempSync(path.join(tmpdir(), 'notary-pipeline-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let counter = 0;

/** A real LexicalReranker that records every passage it is asked to score. */
class CountingReranker implements Reranker {
  readonly scored = new Map<string, number>();
  calls = 0;
  private readonly inner = new LexicalReranker();
  get info(): RerankerInfo {
    return this.inner.info;
  }
  async score(query: string, passages: readonly string[]): Promise<number[]> {
    this.calls++;
    for (const p of passages) this.scored.set(p, (this.scored.get(p) ?? 0) + 1);
    return this.inner.score(query, passages);
  }
  async close(): Promise<void> {}
}

/** The real FTS5 index, recording the query strings it is asked. */
class RecordingIndex implements SearchIndex {
  readonly name = 'recording';
  readonly queries: string[] = [];
  constructor(private readonly inner: Fts5SearchIndex) {}
  upsert(docs: readonly IndexDoc[]): Promise<void> {
    return this.inner.upsert(docs);
  }
  delete(ids: readonly number[]): Promise<void> {
    return this.inner.delete(ids);
  }
  search(query: string, options: IndexSearchOptions): Promise<IndexHit[]> {
    this.queries.push(query);
    return this.inner.search(query, options);
  }
  get(ids: readonly number[]): Promise<IndexDoc[]> {
    return this.inner.get(ids);
  }
  upsertPages(pages: readonly PageDoc[]): Promise<void> {
    return this.inner.upsertPages(pages);
  }
  deletePages(pageIds: readonly number[]): Promise<void> {
    return this.inner.deletePages(pageIds);
  }
  searchPages(query: string, options: { limit: number }): Promise<PageHit[]> {
    this.queries.push(`page:${query}`);
    return this.inner.searchPages(query, options);
  }
  stats(): Promise<IndexStats> {
    return this.inner.stats();
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

const page = (id: number, title: string, text: string): IndexDoc => ({
  id,
  pageId: id,
  url: `http://aero.test/${id}`,
  title,
  headingPath: '',
  text,
});

/** Two turbine pages sharing film-cooling vocabulary, one film-cooling page without any query word, distractors. */
const CORPUS: IndexDoc[] = [
  page(1, 'Turbine blade cooling', 'Heat transfer on turbine blades is controlled by film cooling. The film cooling effectiveness depends on the blowing ratio of the coolant jets.'),
  page(2, 'Blade heat loads', 'Heat transfer to turbine blades rises with free stream turbulence. Film cooling holes lower the blade temperature; film effectiveness falls with distance.'),
  page(3, 'Injection through holes', 'The blowing ratio and coolant density set film cooling effectiveness downstream of injection holes in a flat wall.'),
  page(4, 'Supersonic inlet buzz', 'Inlet buzz is a shock oscillation at the entrance of a supersonic diffuser when mass flow is spilled.'),
  page(5, 'Radiant heat in furnaces', 'Radiant heat from flames dominates the furnace wall load at high temperature.'),
  page(6, 'Wing flutter', 'Flutter of a swept wing couples bending and torsion modes at a critical speed.'),
];

const searchConfig = (over: Partial<NotaryConfig['search']> = {}): NotaryConfig['search'] => ({
  ...configSchema.parse({}).search,
  max_depth: 5,
  ...over,
});

const opened: SearchIndex[] = [];
afterEach(async () => {
  for (const index of opened.splice(0)) await index.close();
});

async function setUp(
  options: SearchPipelineOptions = {},
  config: Partial<NotaryConfig['search']> = {},
): Promise<{ pipeline: SearchPipeline; index: RecordingIndex; reranker: CountingReranker }> {
  const fts = new Fts5SearchIndex(new BetterSqlite3(path.join(dir, `index-${counter++}.sqlite`)), { ownsHandle: true });
  await fts.upsert(CORPUS);
  const index = new RecordingIndex(fts);
  opened.push(index);
  const reranker = new CountingReranker();
  return { pipeline: new SearchPipeline({ index, reranker, config: searchConfig(config), options }), index, reranker };
}

function expectScoresOrdered(outcome: SearchOutcome): void {
  const scores = outcome.results.map((r) => r.rerank_score);
  for (const s of scores) {
    expect(s).toBeGreaterThanOrEqual(0);
    expect(s).toBeLessThanOrEqual(1);
  }
  expect(scores).toEqual([...scores].sort((a, b) => b - a));
}

// "rotor" is in no passage, so the best passages do not cover the query and reflection reformulates.
const QUERY = 'heat transfer to turbine rotor blades';

describe('SearchPipeline reflection', () => {
  it('finds a passage through expansion terms that the query alone cannot reach', async () => {
    const { pipeline } = await setUp();
    const one = await pipeline.search({ query: QUERY, depth: 1 });
    expect(one.results.map((r) => r.url)).not.toContain('http://aero.test/3');

    const two = await pipeline.search({ query: QUERY, depth: 2 });
    const pass = two.timings.passes[1];
    expect(pass?.expansion?.map((t) => t.term)).toEqual(expect.arrayContaining(['film', 'cooling']));
    expect(pass?.retrieved_new).toBeGreaterThan(0);
    expect(two.results.map((r) => r.url)).toContain('http://aero.test/3');
    // Expansion terms add candidates; the query's own best pages stay on top.
    expect(two.results.slice(0, 2).map((r) => r.url).sort()).toEqual(['http://aero.test/1', 'http://aero.test/2']);
    expectScoresOrdered(two);
  });

  it('stops when a pass brings nothing new, without further index queries', async () => {
    const { pipeline, index } = await setUp();
    const outcome = await pipeline.search({ query: QUERY, depth: 5 });
    const passes = outcome.timings.passes;
    expect(passes.length).toBeLessThan(5);
    expect(outcome.timings.depth_reached).toBe(passes.length);
    expect(passes.at(-1)?.reranked).toBe(0);
    expect(passes.slice(0, -1).every((p) => p.reranked > 0)).toBe(true);
    expect(index.queries).toHaveLength(passes.reduce((n, p) => n + p.queries, 0));
  });

  it('scores no passage twice in one request', async () => {
    const { pipeline, reranker } = await setUp({}, { rerank_top_n: 4 });
    const outcome = await pipeline.search({ query: QUERY, depth: 4 });
    expect(reranker.calls).toBeGreaterThan(1);
    expect([...reranker.scored.values()].every((n) => n === 1)).toBe(true);
    expect(reranker.scored.size).toBe(outcome.timings.reranked);
    expect(outcome.timings.passes.reduce((n, p) => n + p.reranked, 0)).toBe(outcome.timings.reranked);
  });

  it('retrieves each part of a multi-part question', async () => {
    const { pipeline, index } = await setUp();
    const query = 'heat transfer on turbine blades, and shock oscillation in supersonic inlets?';
    const outcome = await pipeline.search({ query, depth: 2 });
    expect(outcome.timings.passes[1]?.sub_queries).toEqual(['heat transfer on turbine blades', 'shock oscillation in supersonic inlets']);
    expect(index.queries).toEqual(expect.arrayContaining(['heat transfer on turbine blades', 'shock oscillation in supersonic inlets']));
    expectScoresOrdered(outcome);
  });

  it('reads the best pages in full in the first reflection pass', async () => {
    const { pipeline, reranker } = await setUp({}, { rerank_top_n: 1 });
    const depth1 = await pipeline.search({ query: 'film cooling effectiveness', depth: 1 });
    const scoredAtDepth1 = reranker.scored.size;
    const depth2 = await pipeline.search({ query: 'film cooling effectiveness', depth: 2 });
    expect(depth1.timings.reranked).toBe(1);
    // Every passage of the best page that holds a query word is scored, beyond the one the first pass scored.
    expect(depth2.timings.passes[1]?.queries).toBeGreaterThan(0);
    expect(depth2.timings.reranked).toBeGreaterThan(1);
    expect(reranker.scored.size).toBeGreaterThan(scoredAtDepth1);
    expectScoresOrdered(depth2);
  });

  it('looks deeper instead of reformulating when the best passages hold every query word', async () => {
    const { pipeline, index, reranker } = await setUp({ reflection: { pagePassPages: 0 } }, { rerank_top_n: 1 });
    const outcome = await pipeline.search({ query: 'film cooling effectiveness', depth: 2 });
    const pass = outcome.timings.passes[1];
    expect(pass?.coverage).toBe(1);
    expect(pass?.expansion).toEqual([]);
    expect(pass?.queries).toBe(0);
    expect(pass?.reranked).toBe(1);
    // The page ranking is begun first, so that it runs beside the passage query.
    expect(index.queries).toEqual(['page:film cooling effectiveness', 'film cooling effectiveness']);
    expect(reranker.scored.size).toBe(2);
  });

  it('keeps rerank_score within [0,1] and results ordered by it at every depth, tail included', async () => {
    const { pipeline } = await setUp({}, { rerank_top_n: 2, max_results: 20 });
    for (const depth of [1, 2, 3]) {
      const outcome = await pipeline.search({ query: QUERY, depth });
      expect(outcome.results.length).toBeGreaterThan(2);
      expectScoresOrdered(outcome);
      expect(new Set(outcome.results.map((r) => r.url)).size).toBe(outcome.results.length);
    }
  });
});

describe('SearchPipeline depth 1', () => {
  it('is one passage retrieval, one page retrieval and one rerank of the top passages, in index order', async () => {
    const { pipeline, index, reranker } = await setUp({ retrievalWeight: { lexical: 0 } }, { rerank_top_n: 3 });
    const outcome = await pipeline.search({ query: QUERY, depth: 1 });
    expect(index.queries).toEqual([`page:${QUERY}`, QUERY]);
    expect(reranker.calls).toBe(1);
    const fts = new Fts5SearchIndex(new BetterSqlite3(path.join(dir, `index-${counter++}.sqlite`)), { ownsHandle: true });
    await fts.upsert(CORPUS);
    const hits = await fts.search(QUERY, { limit: 30, perPageLimit: 3 });
    await fts.close();
    expect([...reranker.scored.keys()]).toEqual(hits.slice(0, 3).map(passageModelText));
    // With no retrieval weight, scores are the reranker's own, best first.
    const expected = await new LexicalReranker().score(QUERY, hits.slice(0, 3).map(passageModelText));
    const byUrl = new Map(hits.slice(0, 3).map((h, i) => [h.url, expected[i]]));
    for (const r of outcome.results.slice(0, 3)) expect(r.rerank_score).toBeCloseTo(byUrl.get(r.url) ?? -1, 10);
    expect(outcome.timings.passes).toHaveLength(1);
    expect(outcome.timings.depth_reached).toBe(1);
    expectScoresOrdered(outcome);
  });

  it('fuses the index score with the reranker score by default', async () => {
    const { pipeline } = await setUp({}, { rerank_top_n: 3 });
    const plain = await (await setUp({ retrievalWeight: { lexical: 0 } }, { rerank_top_n: 3 })).pipeline.search({ query: QUERY, depth: 1 });
    const fused = await pipeline.search({ query: QUERY, depth: 1 });
    expect(fused.results[0]?.rerank_score).not.toBeCloseTo(plain.results[0]?.rerank_score ?? 0, 6);
    expectScoresOrdered(fused);
  });

  it('without reranking returns the index order with squashed scores and never calls the reranker', async () => {
    const { pipeline, reranker } = await setUp({}, { rerank_top_n: 0 });
    const outcome = await pipeline.search({ query: QUERY, depth: 3 });
    expect(reranker.calls).toBe(0);
    expect(outcome.timings.passes).toHaveLength(1);
    expect(outcome.results.length).toBeGreaterThan(0);
    expectScoresOrdered(outcome);
  });

  it('returns nothing for a query with no words', async () => {
    const { pipeline, reranker } = await setUp();
    const outcome = await pipeline.search({ query: ' "*:() ', depth: 2 });
    expect(outcome.results).toEqual([]);
    expect(reranker.calls).toBe(0);
  });
});

describe('page evidence by query length', () => {
  it('applies in full to short lookups, fades for longer queries and is gone for long questions', async () => {
    const { pageWeightScale } = await import('./tuning.js');
    const options = { fullUpToWords: 4, noneFromWords: 16 };
    expect(pageWeightScale(1, options)).toBe(1);
    expect(pageWeightScale(4, options)).toBe(1);
    expect(pageWeightScale(10, options)).toBeCloseTo(0.5);
    expect(pageWeightScale(16, options)).toBe(0);
    expect(pageWeightScale(40, options)).toBe(0);
  });
});

describe('candidateOrder (which fused candidates the reranker scores)', () => {
  it("puts each list's head before passages that rank high only by being in both lists", () => {
    // Fused by RRF (k 60), 7 and 8 sit in both lists' middles and outrank 1, the full-text list's best, which the
    // vector list lacks; cut at 3, the fused order alone would never score 1.
    const lexical = [1, 7, 8, 2];
    const dense = [9, 8, 7, 3];
    const fused = [8, 7, 9, 1, 2, 3];
    expect(candidateOrder([lexical, dense], fused, 1).slice(0, 3)).toEqual([1, 9, 8]);
    expect(fused.slice(0, 3)).not.toContain(1);
  });

  it('takes the heads in turns, so a cut keeps the best of every list, then follows the fused order without repeats', () => {
    expect(candidateOrder([[1, 2, 3], [4, 5, 6]], [5, 2, 6, 1, 4, 3], 2)).toEqual([1, 4, 2, 5, 6, 3]);
    expect(candidateOrder([[1, 2], [1, 3]], [3, 2, 1], 2)).toEqual([1, 2, 3]);
  });

  it('is the fused order when no head is asked for, and copes with short lists', () => {
    expect(candidateOrder([[1, 2], [3]], [3, 2, 1], 0)).toEqual([3, 2, 1]);
    expect(candidateOrder([[], [3]], [3, 2], 5)).toEqual([3, 2]);
  });
});
