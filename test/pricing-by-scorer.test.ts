import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServeApp } from '../cli/serve.js';
import { configSchema, type NotaryConfig } from '../core/config.js';
import { Runtime } from '../runtime/index.js';
import { fileAvailable, sharedDir } from '../testkit/components.js';
import { htmlPageFetched } from '../storage/pages.js';

/**
 * Depth 2 costs what its compute costs (issue 28): a search whose rerank_score comes from the cross-encoder is quoted
 * and charged pricing.search.cross_encoder_credits more, and only when the cross-encoder runs. Real models from
 * ../shared (the cross-encoder's random weights do not matter: this is about who runs, not what they score).
 */
const biDir = path.join(sharedDir, 'models', 'all-MiniLM-L6-v2');
const crossDir = path.join(sharedDir, 'models', 'ms-marco-MiniLM-L-6-v2');
const present = fileAvailable('the bi-encoder', path.join(biDir, 'onnx', 'model.onnx')) && fileAvailable('the cross-encoder', path.join(crossDir, 'tokenizer.json'));

const PAGES = [
  ['autovacuum', 'The Autovacuum Daemon', 'The autovacuum daemon automates VACUUM and ANALYZE. Dead tuples left by updates and deletes are removed so their space is reused.'],
  ['wal', 'Write-Ahead Logging', 'Write-ahead logging makes sure that changes to data files are written only after those changes have been logged and flushed.'],
  ['indexes', 'Index Types', 'B-tree indexes handle equality and range queries on data that can be sorted. Hash indexes store a hash code of the value.'],
] as const;

const dirs: string[] = [];

async function openRuntime(overrides: Partial<Pick<NotaryConfig, 'reranker' | 'embeddings'>>): Promise<Runtime> {
  const dir = mkdtempSync(path.join(tmpdir(), 'notary-pricing-scorer-'));
  dirs.push(dir);
  const config = configSchema.parse({
    data_dir: dir,
    reranker: { model_dir: crossDir, download: false, workers: 1 },
    embeddings: { model: biDir },
    indexer: { passage_min_words: 5, passage_max_words: 40 },
    search: { max_depth: 3 },
    pricing: { search: { credits_by_depth: [1, 1, 2], cross_encoder_credits: 40 } },
  });
  const runtime = await Runtime.open({ ...config, ...overrides }, { log: () => {}, env: {} });
  for (const [slug, title, text] of PAGES) {
    const url = `http://docs.test/${slug}`;
    const html = `<html><head><title>${title}</title></head><body><h1>${title}</h1><p>${text}</p></body></html>`;
    await runtime.pages.saveFetched(htmlPageFetched(url, html));
  }
  await runtime.indexer((await runtime.dense()).dense).runOnce();
  return runtime;
}

interface Charged {
  status: number;
  credits_used?: number;
  price?: { credits: number; amount: string };
}

/** Serves the runtime as `notary serve` does and makes the calls: the unauthenticated quote, then paid depth 1, 2, 3. */
async function callsOf(runtime: Runtime): Promise<{ quotes: number[]; charged: number[]; balance: number; table: string[] }> {
  const { app } = await buildServeApp(runtime);
  try {
    const tenant = await runtime.accounts.createTenant('pricing-by-scorer', { credits: 1000 });
    const { key } = await runtime.accounts.createKey(tenant.id);
    const call = async (depth: number, authorization?: string): Promise<Charged> => {
      const response = await app.inject({
        method: 'POST',
        url: '/v1/search',
        headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
        payload: { query: 'how does autovacuum remove dead tuples', depth },
      });
      return { status: response.statusCode, ...(response.json() as Omit<Charged, 'status'>) };
    };
    const quotes: number[] = [];
    const charged: number[] = [];
    for (const depth of [1, 2, 3]) {
      const unpaid = await call(depth);
      expect(unpaid.status).toBe(401);
      quotes.push(unpaid.price?.credits ?? -1);
      const paid = await call(depth, `Bearer ${key}`);
      expect(paid.status).toBe(200);
      charged.push(paid.credits_used ?? -1);
    }
    const llms = await app.inject({ method: 'GET', url: '/llms.txt' });
    const table = llms.body.split('\n').filter((line) => /search depth/.test(line));
    return { quotes, charged, balance: (await runtime.accounts.getTenant(tenant.id)).credits, table };
  } finally {
    await app.close();
  }
}

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe.runIf(present)('a search is priced by the scorer that serves its depth', () => {
  let both: Runtime;
  beforeAll(async () => {
    both = await openRuntime({});
  }, 120_000);
  afterAll(async () => {
    await both?.close();
  });

  it('both models: depth 1 costs the passes’ price; depths 2 and 3 add the cross-encoder’s, quoted and charged alike', async () => {
    const { assignment } = await both.scorers();
    expect(assignment.depths.map((d) => [d.from, d.scorer])).toEqual([
      [1, 'bi-encoder'],
      [2, 'cross-encoder'],
    ]);
    const { quotes, charged, balance, table } = await callsOf(both);
    expect(quotes).toEqual([1, 41, 42]);
    expect(charged).toEqual(quotes);
    expect(balance).toBe(1000 - 1 - 41 - 42);
    // The published price list says the same, and why it differs by depth.
    expect(table.join('\n')).toMatch(/search depth 2 \(cross-encoder\)\D+41/);
  }, 120_000);

  it('the cross-encoder configured but not loadable (lexical fallback): no depth pays for it', async () => {
    // No model named, none in the cache, no download: the service falls back to term overlap.
    const { model_dir: _named, ...unnamed } = both.config.reranker;
    const emptyCache = mkdtempSync(path.join(tmpdir(), 'notary-pricing-scorer-cache-'));
    dirs.push(emptyCache);
    const lexical = await openRuntime({
      reranker: { ...unnamed, download: false, cache_dir: emptyCache },
      embeddings: { ...both.config.embeddings, model: 'reranker' },
    });
    try {
      const { assignment } = await lexical.scorers();
      expect(assignment.depths.every((d) => d.scorer !== 'cross-encoder')).toBe(true);
      const { quotes, charged } = await callsOf(lexical);
      expect(quotes).toEqual([1, 1, 2]);
      expect(charged).toEqual([1, 1, 2]);
    } finally {
      await lexical.close();
    }
  }, 120_000);

  it('search.cross_encoder_from_depth 3: depth 2 keeps the passes’ price', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'notary-pricing-scorer-'));
    dirs.push(dir);
    const config = configSchema.parse({
      ...both.config,
      data_dir: dir,
      search: { ...both.config.search, cross_encoder_from_depth: 3 },
    });
    const third = await Runtime.open(config, { log: () => {}, env: {} });
    try {
      await third.scorers();
      const snapshot = await third.catalog.current();
      expect([1, 2, 3].map((depth) => snapshot.pricing.price({ operation: 'search', depth }).credits)).toEqual([1, 1, 42]);
    } finally {
      await third.close();
    }
  }, 120_000);
});
