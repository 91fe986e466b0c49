import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiTestConfig, startApi } from '../testkit/app.js';
import { startTestServer, type TestServer } from '../testkit/upstream-server.js';

/** `include_comments` on POST /v1/extract through the real app, accounts on SQLite and an upstream on 127.0.0.1. */
const thread = readFileSync(path.resolve(import.meta.dirname, 'fixtures/extract-shapes/article-responses.html'), 'utf8');

let upstream: TestServer;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'notary-extract-comments-'));
  upstream = await startTestServer({
    '/bench': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(thread);
    },
  });
});

afterAll(async () => {
  await upstream?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('POST /v1/extract include_comments', () => {
  it('returns the article alone by default and with its reader comments when asked; a non-boolean is a 400', async () => {
    const config = apiTestConfig(dataDir, {
      extract: { allow_private_networks: true, respect_robots_txt: false, render: 'never' },
      pricing: { extract: { credits: 1, credits_rendered: 2 } },
      default_tier: 'bulk',
    });
    const api = await startApi(config, { withExtract: true });
    try {
      const tenant = await api.runtime.accounts.createTenant('commenter', { credits: 10 });
      const { key } = await api.runtime.accounts.createKey(tenant.id);
      const post = (body: object) => api.app.inject({ method: 'POST', url: '/v1/extract', headers: { authorization: `Bearer ${key}` }, payload: body });
      const url = `${upstream.origin}/bench`;

      const plain = await post({ url, mode: 'text' });
      expect(plain.statusCode, plain.body).toBe(200);
      const article = (plain.json() as { content: string }).content;
      expect(article).toContain('waited at that stop every Tuesday for forty years');
      expect(article).not.toContain('tartan shopping trolley');

      const withComments = await post({ url, mode: 'text', include_comments: true });
      expect(withComments.statusCode, withComments.body).toBe(200);
      const all = (withComments.json() as { content: string; word_count: number }).content;
      expect(all).toContain('waited at that stop every Tuesday for forty years');
      expect(all).toContain('tartan shopping trolley, and she always had a word for everyone who passed by, number 17');

      const bad = await post({ url, include_comments: 'yes' });
      expect(bad.statusCode, bad.body).toBe(400);
      expect(bad.headers['content-type']).toMatch(/^application\/problem\+json/);
    } finally {
      await api.close();
    }
  });
});
