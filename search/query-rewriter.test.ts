import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema, type NotaryConfig } from '../core/config.js';
import { Fts5SearchIndex } from '../indexer/backends/fts5/search-index.js';
import type { IndexDoc } from '../indexer/search-index.js';
import { LexicalReranker } from '../reranker/lexical.js';
import { SearchPipeline } from './pipeline.js';
import { logRewriterFailures, OpenAiQueryRewriter, parseRewrites, queryRewriterFromConfig, rewritePrompt, type QueryRewriter } from './query-rewriter.js';
import { startChatServer, type ChatServer } from '../testkit/chat-server.js';

let chat: ChatServer;
const requests = (): ChatServer['requests'] => chat.requests;
const dir = mkdtempSync(path.join(tmpdir(), 'notary-rewriter-'));
beforeAll(async () => {
  chat = await startChatServer();
});
afterAll(async () => {
  await chat.close();
  rmSync(dir, { recursive: true, force: true });
});

const rewriter = (over: Partial<ConstructorParameters<typeof OpenAiQueryRewriter>[0]> = {}): OpenAiQueryRewriter =>
  new OpenAiQueryRewriter({ url: chat.url, model: 'test-model', apiKey: 'sk-test', timeoutMs: 2000, maxQueries: 3, maxQueryLength: 100, ...over });

describe('parseRewrites', () => {
  it('takes one query per line without list markers, quotes, repeats or the original', () => {
    const text = '1. wing flutter\n- "torsion bending coupling"\n\nQuery 3: Wing Flutter\nAEROELASTIC instability\n* extra one\n* and more';
    expect(parseRewrites(text, 'aeroelastic instability', 3, 100)).toEqual(['wing flutter', 'torsion bending coupling', 'extra one']);
  });

  it('cuts queries to the length limit and gives nothing for an empty answer', () => {
    expect(parseRewrites('x'.repeat(50), 'q', 3, 10)).toEqual(['x'.repeat(10)]);
    expect(parseRewrites('  \n\n', 'q', 3, 10)).toEqual([]);
  });
});

describe('OpenAiQueryRewriter against a chat completions server on 127.0.0.1', () => {
  it('sends the query and passages with the model and key, and parses the answer', async () => {
    chat.behaviour = { kind: 'answer', content: 'wing flutter\nbending torsion coupling' };
    chat.requests.length = 0;
    const outcome = await rewriter().rewrite('aeroelastic instability', ['Flutter of a swept wing couples bending and torsion.']);
    expect(outcome).toMatchObject({ queries: ['wing flutter', 'bending torsion coupling'] });
    expect(outcome.error).toBeUndefined();
    const [request] = requests();
    expect(request?.path).toBe('/v1/chat/completions');
    expect(request?.authorization).toBe('Bearer sk-test');
    expect(request?.body.model).toBe('test-model');
    expect(request?.body.temperature).toBe(0);
    const user = request?.body.messages.find((m) => m.role === 'user')?.content ?? '';
    expect(user).toBe(rewritePrompt('aeroelastic instability', ['Flutter of a swept wing couples bending and torsion.'], 3));
    expect(user).toContain('Query: aeroelastic instability');
    expect(user).toContain('1. Flutter of a swept wing');
  });

  it('reports an HTTP error, a malformed answer and a timeout instead of throwing', async () => {
    chat.behaviour = { kind: 'status', status: 503 };
    const failed = await rewriter().rewrite('q', []);
    expect(failed.queries).toEqual([]);
    expect(failed.error).toMatch(/^HTTP 503/);

    chat.behaviour = { kind: 'garbage' };
    expect((await rewriter().rewrite('q', [])).error).toMatch(/no message content/);

    chat.behaviour = { kind: 'hang' };
    const started = performance.now();
    const slow = await rewriter({ timeoutMs: 300 }).rewrite('q', []);
    expect(slow.queries).toEqual([]);
    expect(slow.error).toMatch(/^timed out/);
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it('is configured only when search.query_rewriter.url is set', () => {
    const search = configSchema.parse({}).search;
    expect(queryRewriterFromConfig(search)).toBeUndefined();
    const on = queryRewriterFromConfig({ ...search, query_rewriter: { ...search.query_rewriter, url: chat.url } });
    expect(on?.model).toBe('gpt-4o-mini');
  });

  it('logs failures through the wrapper and passes answers on', async () => {
    const logged: string[] = [];
    chat.behaviour = { kind: 'status', status: 500 };
    const wrapped = logRewriterFailures(rewriter(), (m) => logged.push(m));
    expect((await wrapped.rewrite('q', [])).queries).toEqual([]);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatch(/query rewriter \(test-model\) failed after \d+ ms, searched without it: HTTP 500/);
  });
});

describe('SearchPipeline with a query rewriter', () => {
  const docs: IndexDoc[] = [
    ['Wing flutter', 'Flutter of a swept wing couples bending and torsion modes at a critical speed.'],
    ['Supersonic inlet buzz', 'Inlet buzz is a shock oscillation at the entrance of a supersonic diffuser.'],
    ['Radiant heat in furnaces', 'Radiant heat from flames dominates the furnace wall load at high temperature.'],
  ].map(([title, text], i) => ({ id: i + 1, pageId: i + 1, url: `http://aero.test/${i + 1}`, title: title ?? '', headingPath: '', text: text ?? '' }));
  const config: NotaryConfig['search'] = { ...configSchema.parse({}).search, max_depth: 3 };

  async function pipelineWith(queryRewriter?: QueryRewriter): Promise<{ pipeline: SearchPipeline; close: () => Promise<void> }> {
    const index = new Fts5SearchIndex(new BetterSqlite3(path.join(dir, `index-${Math.random()}.sqlite`)), { ownsHandle: true });
    await index.upsert(docs);
    const pipeline = new SearchPipeline({ index, reranker: new LexicalReranker(), config, ...(queryRewriter ? { rewriter: queryRewriter } : {}) });
    return { pipeline, close: () => index.close() };
  }

  // No passage holds a word of this query: only the rewriter's vocabulary reaches the flutter page.
  const QUERY = 'aeroelastic instability';

  it('retrieves with the rewritten queries at depth 2 and never calls the rewriter at depth 1', async () => {
    chat.behaviour = { kind: 'answer', content: 'wing flutter\nbending torsion' };
    const { pipeline, close } = await pipelineWith(rewriter());
    try {
      chat.requests.length = 0;
      const one = await pipeline.search({ query: QUERY, depth: 1 });
      expect(one.results).toEqual([]);
      expect(requests()).toHaveLength(0);

      const two = await pipeline.search({ query: QUERY, depth: 2 });
      expect(requests()).toHaveLength(1);
      expect(two.results.map((r) => r.url)).toEqual(['http://aero.test/1']);
      expect(two.timings.passes[1]?.rewriter?.queries).toEqual(['wing flutter', 'bending torsion']);

      chat.requests.length = 0;
      const three = await pipeline.search({ query: QUERY, depth: 3 });
      expect(requests()).toHaveLength(1);
      expect(three.timings.passes[2]?.rewriter).toBeUndefined();
    } finally {
      await close();
    }
  });

  it('searches as if there were no rewriter when the endpoint fails', async () => {
    chat.behaviour = { kind: 'status', status: 500 };
    const withFailing = await pipelineWith(rewriter());
    const without = await pipelineWith();
    try {
      const failed = await withFailing.pipeline.search({ query: 'flutter of wings', depth: 2 });
      const plain = await without.pipeline.search({ query: 'flutter of wings', depth: 2 });
      expect(failed.results).toEqual(plain.results);
      expect(failed.timings.passes[1]?.rewriter?.error).toMatch(/HTTP 500/);
    } finally {
      await withFailing.close();
      await without.close();
    }
  });
});
