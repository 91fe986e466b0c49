import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveDirectory, type StaticServer } from '../testkit/serve-static.js';
import { startChatServer, type ChatServer } from '../testkit/chat-server.js';
import { runCli, startServer } from '../testkit/cli.js';
import { freePort } from '../testkit/postgres.js';

/**
 * The optional query rewriter through the real command line and server, against a chat completions endpoint on
 * 127.0.0.1: `notary search` at depth 2 retrieves with the rewritten queries and says so, a dead endpoint leaves the
 * search working, and `notary serve` reports the rewriter in /healthz and answers /v1/search with its help.
 */
let site: StaticServer;
let chat: ChatServer;
let root: string;
let data: string;

const PAGES: Record<string, [string, string]> = {
  'flutter.html': ['Wing flutter', 'Flutter of a swept wing couples bending and torsion modes at a critical speed; the flutter speed rises with the torsional stiffness of the wing box.'],
  'buzz.html': ['Inlet buzz', 'Inlet buzz is a shock oscillation at the entrance of a supersonic diffuser when mass flow is spilled.'],
};
// No page holds a word of this query: only the rewriter's vocabulary reaches the flutter page.
const QUERY = 'aeroelastic instability';
const baseEnv = { NOTARY_LOG_LEVEL: 'warn', NOTARY_MODEL_DOWNLOAD: 'false', NOTARY_EMBEDDING_MODEL: 'off' };

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), 'notary-cli-rewriter-'));
  const siteDir = path.join(root, 'site');
  mkdirSync(siteDir);
  writeFileSync(path.join(siteDir, 'index.html'), '<html><head><title>Notes</title></head><body><p><a href="flutter.html">one</a> <a href="buzz.html">two</a></p></body></html>');
  for (const [file, [title, text]] of Object.entries(PAGES)) {
    writeFileSync(path.join(siteDir, file), `<html><head><title>${title}</title></head><body><h1>${title}</h1><p>${text}</p></body></html>`);
  }
  site = await serveDirectory(siteDir);
  chat = await startChatServer({ kind: 'answer', content: 'wing flutter\ntorsion stiffness' });
  data = path.join(root, 'data');
  const crawl = await runCli(['--data', data, 'crawl', `${site.url}/index.html`, '--delay-ms', '0'], baseEnv, 120_000);
  expect(crawl.code, crawl.stderr).toBe(0);
});
afterAll(async () => {
  await site?.close();
  await chat?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('query rewriter from the command line', () => {
  it('notary search uses the rewritten queries at depth 2 and reports them; a dead endpoint is survived', async () => {
    const env = { ...baseEnv, NOTARY_QUERY_REWRITER_URL: chat.url, NOTARY_QUERY_REWRITER_MODEL: 'test-model' };
    const before = chat.requests.length;
    const one = await runCli(['--data', data, 'search', QUERY, '--depth', '1'], env);
    expect(one.stdout).toContain('no results');
    expect(chat.requests.length).toBe(before);

    const two = await runCli(['--data', data, 'search', QUERY, '--depth', '2'], env);
    expect(two.code, two.stderr).toBe(0);
    expect(two.stdout).toMatch(/^1\. Wing flutter/m);
    expect(two.stderr).toMatch(/query rewriter \(test-model, \d+ ms\): "wing flutter", "torsion stiffness"/);
    expect(chat.requests.at(-1)?.body.model).toBe('test-model');

    const dead = await runCli(['--data', data, 'search', QUERY, '--depth', '2'], { ...env, NOTARY_QUERY_REWRITER_URL: `http://127.0.0.1:${await freePort()}/v1` });
    expect(dead.code, dead.stderr).toBe(0);
    expect(dead.stdout).toContain('no results');
    expect(dead.stderr).toMatch(/query rewriter \(test-model\) failed after \d+ ms, searched without it/);
  });

  it('notary serve reports the rewriter and uses it for /v1/search at depth 2', async () => {
    const env = { ...baseEnv, NOTARY_QUERY_REWRITER_URL: chat.url };
    const made = await runCli(['--data', data, 'keys', 'create', '--tenant', 'rw', '--credits', '10'], env);
    expect(made.code, made.stderr).toBe(0);
    const key = made.stdout.trim().split('\n').at(-1) ?? '';
    const server = await startServer(['--data', data, '--no-crawl'], await freePort(), env);
    try {
      const health = (await (await fetch(`${server.url}/healthz`)).json()) as { query_rewriter: unknown };
      expect(health.query_rewriter).toEqual({ model: 'gpt-4o-mini' });
      expect(server.output()).toContain(`query rewriter: gpt-4o-mini at ${chat.url}`);
      const res = await fetch(`${server.url}/v1/search`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query: QUERY, depth: 2 }),
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { results: Array<{ url: string }>; credits_used: number };
      expect(body.results.map((r) => r.url)).toEqual([`${site.url}/flutter.html`]);
      // Depth 2 is priced by pricing.search.credits_by_depth, whose default charges what depth 1 does.
      expect(body.credits_used).toBe(1);
      const balance = await runCli(['--data', data, 'keys', 'list', '--json'], env);
      expect((JSON.parse(balance.stdout) as Array<{ balance: number }>)[0]?.balance).toBe(9);
    } finally {
      await server.stop();
    }
  });
});
