import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, runCli } from '../testkit/cli.js';

/**
 * `notary crawl` as an operator runs it: scope and limit flags, a summary whose counts add up, and a crawl killed
 * with SIGKILL that `notary crawl --resume` finishes without fetching a stored page again.
 */

const PAGES = 60;
let server: Server;
let base = '';
const hits: string[] = [];

function page(i: number): string {
  const links = [i + 1, i + 2, (i * 11) % PAGES].filter((n) => n < PAGES).map((n) => `<a href="/docs/p${n}.html">p${n}</a>`);
  return `<!doctype html><html><head><title>Page ${i}</title></head><body><h1>Page ${i}</h1><p>${'Text of page ' + i + '. '.repeat(20)}</p>${links.join(' ')} <a href="/blog/x.html">blog</a></body></html>`;
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = req.url ?? '/';
    hits.push(url);
    const match = /^\/docs\/p(\d+)\.html$/.exec(url);
    if (url === '/robots.txt' || url === '/sitemap.xml' || !match) return void res.writeHead(404).end();
    // Slow enough that the crawl is still running when it is killed.
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(page(Number(match[1])));
    }, 60);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const env = { NOTARY_EMBEDDING_MODEL: 'off', NOTARY_MODEL_DOWNLOAD: 'false' };

function rows<T>(file: string, query: string): T[] {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    return db.prepare(query).all() as T[];
  } finally {
    db.close();
  }
}

describe('notary crawl: scope, limits, resume after SIGKILL', () => {
  it('--max-pages counts stored pages; --scope and --exclude narrow; the summary adds up', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'notary-cli-crawl-'));
    try {
      const res = await runCli(
        ['--data', dataDir, 'crawl', `${base}/docs/p0.html`, '--max-pages', '7', '--exclude', 'p3\\.html$', '--delay-ms', '0', '--concurrency', '4'],
        env,
      );
      expect(res.code, res.stderr).toBe(0);
      expect(res.stdout).toContain(`scope path: under ${base}/docs/; never p3\\.html$`);
      expect(res.stdout).toMatch(/stored\s+7 of max 7 pages/);
      const found = Number(/found\s+(\d+) URLs/.exec(res.stdout)?.[1]);
      const stored = Number(/stored\s+(\d+) of/.exec(res.stdout)?.[1]);
      const duplicates = Number(/duplicates\s+(\d+)/.exec(res.stdout)?.[1]);
      const failed = Number(/failed\s+(\d+)/.exec(res.stdout)?.[1]);
      const skipped = Number(/skipped\s+(\d+)/.exec(res.stdout)?.[1]);
      const queued = Number(/queued\s+(\d+)/.exec(res.stdout)?.[1]);
      expect(stored + duplicates + failed + skipped + queued).toBe(found);
      expect(res.stdout).toMatch(new RegExp(`out of scope: 1 under ${base}/blog/ \\(outside /docs/\\)`));
      expect(res.stdout).toMatch(/out of scope: 1 under .*\/docs\/ \(matches exclude p3\\\.html\$\)/);
      // Progress lines carry a rate, and are plain lines when stderr is not a terminal.
      expect(res.stderr).toMatch(/crawl: stored 7\/7 .* pages\/s/);
      const counted = rows<{ n: number }>(path.join(dataDir, 'notary.sqlite'), "select count(*) as n from pages where state != 'gone'")[0]?.n;
      expect(counted).toBe(7);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('a crawl killed with SIGKILL is marked interrupted, and --resume fetches only what it had not stored', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'notary-cli-resume-'));
    const db = path.join(dataDir, 'notary.sqlite');
    try {
      hits.length = 0;
      const child = spawn(
        process.execPath,
        [path.join(repoRoot, 'bin/notary.js'), '--data', dataDir, 'crawl', `${base}/docs/p0.html`, '--delay-ms', '0', '--concurrency', '2'],
        { cwd: repoRoot, env: { ...process.env, ...env }, stdio: 'ignore' },
      );
      const pageHits = () => hits.filter((h) => h.startsWith('/docs/')).length;
      const deadline = Date.now() + 120_000;
      while (pageHits() < 20 && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 20));
      expect(child.exitCode, 'the crawl ended before it could be killed').toBeNull();
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));

      const killedRun = rows<{ id: string; status: string }>(db, 'select id, status from crawl_runs')[0];
      expect(killedRun?.status).toBe('running'); // as the killed process left it
      const storedBefore = new Set(rows<{ url: string }>(db, 'select url from pages').map((r) => new URL(r.url).pathname));
      expect(storedBefore.size).toBeGreaterThan(5);
      expect(storedBefore.size).toBeLessThan(PAGES);
      const firstRunHits = hits.splice(0);

      const status = await runCli(['--data', dataDir, 'status'], env);
      expect(status.stdout).toMatch(/last crawl\s+run_\S+ interrupted, started .* \(its process died\)/);
      expect(status.stdout).toMatch(/resumable\s+run_\S+ \(interrupted\): \d+ URLs queued; notary crawl --resume continues it/);

      const resumed = await runCli(['--data', dataDir, 'crawl', '--resume', '--delay-ms', '0', '--concurrency', '2'], env);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout).toContain(`(resumes ${killedRun?.id})`);
      expect(resumed.stdout).toMatch(new RegExp(`stored\\s+${PAGES} of max \\d+ pages: .*${storedBefore.size} stored before the resume`));

      // No page the killed run stored is fetched again; pages in flight at the kill may be (they were not stored).
      const refetched = hits.filter((h) => storedBefore.has(h));
      expect(refetched).toEqual([]);
      const docsHits = hits.filter((h) => h.startsWith('/docs/'));
      expect(new Set(docsHits).size).toBe(docsHits.length);
      expect(storedBefore.size + docsHits.length).toBeLessThanOrEqual(PAGES + 2);
      // The killed run had at most --concurrency requests in flight that it never stored.
      expect(firstRunHits.filter((h) => h.startsWith('/docs/')).length - storedBefore.size).toBeLessThanOrEqual(2);

      const runsAfter = rows<{ id: string; status: string; resumed_from: string | null }>(db, 'select id, status, resumed_from from crawl_runs order by started_at');
      expect(runsAfter).toEqual([
        { id: killedRun?.id, status: 'interrupted', resumed_from: null },
        { id: expect.stringMatching(/^run_/), status: 'finished', resumed_from: killedRun?.id },
      ]);
      expect(rows<{ n: number }>(db, 'select count(*) as n from pages')[0]?.n).toBe(PAGES);
      expect(rows<{ n: number }>(db, 'select count(*) as n from crawl_frontier')[0]?.n).toBe(0);

      const again = await runCli(['--data', dataDir, 'crawl', '--resume'], env);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain('[nothing_to_resume]');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
