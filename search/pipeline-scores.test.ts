import BetterSqlite3 from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { configSchema } from '../core/config.js';
import { Fts5SearchIndex } from '../indexer/backends/fts5/search-index.js';
import type { IndexDoc, IndexFilter, IndexHit, IndexSearchOptions, IndexStats, PageDoc, PageHit, SearchIndex } from '../indexer/search-index.js';
import { LexicalReranker } from '../reranker/lexical.js';
import { SearchPipeline } from './pipeline.js';

/**
 * The real FTS5 index with every result list's scores multiplied by a factor of its own (derived from the query):
 * what another backend's scale looks like (Meilisearch's ranking scores are 0..1, BM25's are unbounded). A score
 * means something only within its own list (SearchIndex), so the pipeline's answers must not change.
 */
class RescaledIndex implements SearchIndex {
  readonly name = 'rescaled';
  constructor(
    private readonly inner: SearchIndex,
    private readonly factor: (query: string) => number,
  ) {}
  upsert(docs: readonly IndexDoc[]) {
    return this.inner.upsert(docs);
  }
  delete(ids: readonly number[]) {
    return this.inner.delete(ids);
  }
  async search(query: string, options: IndexSearchOptions): Promise<IndexHit[]> {
    const f = this.factor(query);
    return (await this.inner.search(query, options)).map((h) => ({ ...h, score: h.score * f }));
  }
  upsertPages(pages: readonly PageDoc[]) {
    return this.inner.upsertPages(pages);
  }
  deletePages(pageIds: readonly number[]) {
    return this.inner.deletePages(pageIds);
  }
  async searchPages(query: string, options: { limit: number; filter?: IndexFilter }): Promise<PageHit[]> {
    const f = this.factor(`pages ${query}`);
    return (await this.inner.searchPages(query, options)).map((h) => ({ ...h, score: h.score * f }));
  }
  get(ids: readonly number[]) {
    return this.inner.get(ids);
  }
  stats(): Promise<IndexStats> {
    return this.inner.stats();
  }
  close() {
    return this.inner.close();
  }
}

const doc = (id: number, pageId: number, title: string, text: string): IndexDoc => ({ id, pageId, url: `http://aero.test/${pageId}`, title, headingPath: '', text });
const CORPUS: IndexDoc[] = [
  doc(1, 1, 'Turbine blade cooling', 'Heat transfer on turbine blades is controlled by film cooling. The film cooling effectiveness depends on the blowing ratio of the coolant jets.'),
  doc(2, 2, 'Blade heat loads', 'Heat transfer to turbine blades rises with free stream turbulence. Film cooling holes lower the blade temperature; film effectiveness falls with distance.'),
  doc(3, 3, 'Injection through holes', 'The blowing ratio and coolant density set film cooling effectiveness downstream of injection holes in a flat wall.'),
  doc(4, 4, 'Supersonic inlet buzz', 'Inlet buzz is a shock oscillation at the entrance of a supersonic diffuser when mass flow is spilled.'),
  doc(5, 5, 'Radiant heat in furnaces', 'Radiant heat from flames dominates the furnace wall load at high temperature, unlike film cooling of blades.'),
  doc(6, 6, 'Wing flutter', 'Flutter of a swept wing couples bending and torsion modes at a critical speed.'),
  doc(7, 7, 'Coolant jets', 'Coolant jets issuing from holes into a crossflow: the blowing ratio sets the jet trajectory and film coverage.'),
  doc(8, 7, 'Coolant jets', 'Jet liftoff at high blowing ratio reduces the film effectiveness near the hole.'),
];

const opened: SearchIndex[] = [];
afterEach(async () => {
  for (const index of opened.splice(0)) await index.close();
});

async function pipelineOver(factor: (query: string) => number): Promise<SearchPipeline> {
  const fts = new Fts5SearchIndex(new BetterSqlite3(':memory:'), { ownsHandle: true });
  await fts.upsert(CORPUS);
  const index = new RescaledIndex(fts, factor);
  opened.push(index);
  return new SearchPipeline({ index, reranker: new LexicalReranker(), config: { ...configSchema.parse({}).search, max_depth: 3 } });
}

/** A factor per query string between 1e-3 and 1e3, the same for the same query. */
const perQuery = (query: string) => 10 ** (((createHash('sha256').update(query).digest()[0] ?? 0) / 255) * 6 - 3);

describe('what an index score means (SearchIndex: comparable only within one result list)', () => {
  for (const query of ['heat transfer to turbine rotor blades', 'film cooling blowing ratio', 'coolant jets and flutter of wings']) {
    it(`ranks the same whatever scale each list's scores are on: "${query}"`, async () => {
      const reference = await pipelineOver(() => 1);
      const rescaled = await pipelineOver(perQuery);
      for (const depth of [1, 2, 3]) {
        const a = await reference.search({ query, depth });
        const b = await rescaled.search({ query, depth });
        expect(b.results.map((r) => r.url), `depth ${depth}`).toEqual(a.results.map((r) => r.url));
        b.results.forEach((r, i) => expect(r.rerank_score).toBeCloseTo(a.results[i]!.rerank_score, 9));
      }
    });
  }
});
