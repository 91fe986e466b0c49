import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../testkit/cli.js';

/** `notary crawl --collection`, `notary collections`, `notary keys create --collections` as an operator runs them. */

let server: Server;
let base = '';

function page(title: string, links: string[]): string {
  const text = `${title} text. `.repeat(30);
  return `<!doctype html><html><head><title>${title}</title></head><body><h1>${title}</h1><p>${text}</p>${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</body></html>`;
}

const SITE: Record<string, string> = {
  '/hr/': page('HR home', ['/hr/pay.html']),
  '/hr/pay.html': page('Payroll', []),
  '/eng/': page('Engineering home', []),
};

beforeAll(async () => {
  server = createServer((req, res) => {
    const body = SITE[req.url ?? ''];
    if (!body) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const env = { NOTARY_EMBEDDING_MODEL: 'off', NOTARY_MODEL_DOWNLOAD: 'false' };

describe('notary crawl --collection, notary collections, notary keys create --collections', () => {
  it('crawls into a named collection (made when new) or the default one, and limits a key to named collections', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'notary-cli-collections-'));
    try {
      const crawl = (args: string[]) => runCli(['crawl', ...args, '--delay-ms', '0', '--data', dataDir], env, 120_000);
      const hr = await crawl([`${base}/hr/`, '--collection', 'hr']);
      expect(hr.code, hr.stderr).toBe(0);
      const eng = await crawl([`${base}/eng/`]);
      expect(eng.code, eng.stderr).toBe(0);
      const bad = await crawl([`${base}/eng/`, '--collection', 'Not A Name']);
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toContain('invalid_collection');

      const db = new BetterSqlite3(path.join(dataDir, 'notary.sqlite'), { readonly: true });
      let members: Array<{ url: string; name: string }>;
      try {
        members = db
          .prepare(`select p.url, c.name from page_collections pc join pages p on p.id = pc.page_id join collections c on c.id = pc.collection_id order by p.url`)
          .all() as Array<{ url: string; name: string }>;
      } finally {
        db.close();
      }
      expect(members).toEqual([
        { url: `${base}/eng/`, name: 'default' },
        { url: `${base}/hr/`, name: 'hr' },
        { url: `${base}/hr/pay.html`, name: 'hr' },
      ]);

      const list = await runCli(['collections', 'list', '--data', dataDir], env);
      expect(list.code, list.stderr).toBe(0);
      expect(list.stdout).toMatch(/^default {2}col_default {2}1 pages/m);
      expect(list.stdout).toMatch(/^hr {2}col_[0-9A-Za-z]{20} {2}2 pages/m);

      const unknown = await runCli(['keys', 'create', '--tenant', 'acme', '--collections', 'hr,finance', '--data', dataDir], env);
      expect(unknown.code).not.toBe(0);
      expect(unknown.stderr).toContain('collection_not_found');
      expect(unknown.stderr).toContain('"finance"');
      const made = await runCli(['collections', 'create', 'finance', '--data', dataDir], env);
      expect(made.code, made.stderr).toBe(0);
      const key = await runCli(['keys', 'create', '--tenant', 'acme', '--credits', '10', '--collections', 'hr,finance', '--data', dataDir], env);
      expect(key.code, key.stderr).toBe(0);
      expect(key.stdout.trim().split('\n').pop()).toMatch(/^sk_live_/);
      const keys = await runCli(['keys', 'list', '--json', '--data', dataDir], env);
      expect(keys.code, keys.stderr).toBe(0);
      const rows = JSON.parse(keys.stdout) as Array<{ collections: string[] | null }>;
      expect(rows.map((r) => r.collections)).toEqual([['hr', 'finance']]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 300_000);
});
