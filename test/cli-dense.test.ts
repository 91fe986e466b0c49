import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveDirectory, type StaticServer } from '../testkit/serve-static.js';
import { tinyModelDir } from '../testkit/models.js';
import { runCli, startServer } from '../testkit/cli.js';
import { freePort } from '../testkit/postgres.js';

/**
 * Dense retrieval through the real command line: a bi-encoder named as the reranker makes `notary crawl` embed every
 * passage, `notary status` and `GET /healthz` report hybrid retrieval, and `notary search` uses it. The model is the
 * tiny float test model (real ONNX, no meaning), so this checks wiring, not relevance.
 */
const TOPICS = ['autovacuum', 'checkpoint', 'replication', 'tablespace', 'collation'];

let site: StaticServer;
let root: string;
let model: string;

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), 'notary-cli-dense-'));
  const siteDir = path.join(root, 'site');
  mkdirSync(siteDir);
  const links = TOPICS.map((t) => `<a href="${t}.html">${t}</a>`).join(' ');
  writeFileSync(path.join(siteDir, 'index.html'), `<html><head><title>Guides</title></head><body><p>${links}</p></body></html>`);
  for (const topic of TOPICS) {
    const body = Array.from({ length: 150 }, (_, i) => (i % 9 === 0 ? topic : `word${i % 23}`)).join(' ');
    writeFileSync(path.join(siteDir, `${topic}.html`), `<html><head><title>${topic}</title></head><body><h1>${topic}</h1><p>${body}.</p></body></html>`);
  }
  site = await serveDirectory(siteDir);
  model = tinyModelDir('bi-encoder', root);
});
afterAll(async () => {
  await site?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('dense retrieval from the command line', () => {
  it('crawl embeds, status and healthz report hybrid retrieval, search uses it; embeddings off keeps BM25', async () => {
    const data = path.join(root, 'data');
    const env = { NOTARY_RERANKER_MODEL: model, NOTARY_LOG_LEVEL: 'warn', NOTARY_MODEL_DOWNLOAD: 'false' };
    const crawl = await runCli(['--data', data, 'crawl', `${site.url}/index.html`, '--delay-ms', '0'], env, 120_000);
    expect(crawl.code, crawl.stderr).toBe(0);
    const passages = Number(/totals\s+\d+ pages, (\d+) passages/.exec(crawl.stdout)?.[1]);
    expect(passages).toBeGreaterThanOrEqual(TOPICS.length);
    expect(crawl.stdout).toMatch(new RegExp(`vectors\\s+${passages} passages embedded with notary-tiny-bi-encoder-\\w+@sha256:[0-9a-f]{16}`));

    const status = await runCli(['--data', data, 'status', '--json'], env);
    const parsed = JSON.parse(status.stdout) as { retrieval: { mode: string; missing: number; vectors: { vectors: number } } };
    expect(parsed.retrieval).toMatchObject({ mode: 'hybrid', missing: 0, vectors: { vectors: passages } });

    const search = await runCli(['--data', data, 'search', 'zzyzx quokka', '--json'], env);
    expect(search.code, search.stderr).toBe(0);
    // No query word is in the index: only the vectors can find anything.
    expect((JSON.parse(search.stdout) as { results: unknown[] }).results.length).toBeGreaterThan(0);

    const off = await runCli(['--data', data, 'search', 'zzyzx quokka', '--json'], { ...env, NOTARY_EMBEDDING_MODEL: 'off' });
    expect((JSON.parse(off.stdout) as { results: unknown[] }).results).toEqual([]);
    const offStatus = JSON.parse((await runCli(['--data', data, 'status', '--json'], { ...env, NOTARY_EMBEDDING_MODEL: 'off' })).stdout) as { retrieval: unknown };
    expect(offStatus.retrieval).toEqual({ mode: 'bm25', why: 'embeddings.model is off' });

    const server = await startServer(['--data', data, '--no-crawl'], await freePort(), env);
    try {
      const health = (await (await fetch(`${server.url}/healthz`)).json()) as { retrieval: { mode: string } };
      expect(health.retrieval.mode).toBe('hybrid');
    } finally {
      await server.stop();
    }
  });

  it('a cross-encoder named as the embedding model is refused at start-up', async () => {
    const data = path.join(root, 'data-cross');
    const res = await runCli(['--data', data, 'crawl', `${site.url}/index.html`, '--delay-ms', '0'], {
      NOTARY_EMBEDDING_MODEL: tinyModelDir('cross-encoder', root),
      NOTARY_MODEL_DOWNLOAD: 'false',
    });
    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(/embeddings\.model \(NOTARY_EMBEDDING_MODEL\) .* is a cross-encoder; it must name a bi-encoder.*NOTARY_RERANKER_MODEL/);
  });
});
