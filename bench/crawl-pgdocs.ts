/**
 * Crawl throughput on a real corpus: Debian's postgresql-doc-15 HTML (1,169 pages) served from 127.0.0.1 with
 * politeness off. Usage: npx tsx crawler/bench-pgdocs.ts [docDir] [concurrency]
 * Prints one JSON line with pages/s and the number of pages stored.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { configSchema } from '../core/config.js';
import { CrawlRunStore } from '../storage/crawl-runs.js';
import { FrontierStore } from '../storage/frontier.js';
import { migrateToLatest, openSqlite } from '../storage/db.js';
import { PageStore } from '../storage/pages.js';
import { runCrawl } from '../crawler/crawl.js';
import { serveDirectory } from '../testkit/serve-static.js';

const docDir = process.argv[2] ?? process.env['NOTARY_PGDOCS_DIR'] ?? '/usr/share/doc/postgresql-doc-15/html';
const concurrency = Number(process.argv[3] ?? 32);

const expected = readdirSync(docDir).filter((f) => f.endsWith('.html')).length;
const tmp = mkdtempSync(path.join(tmpdir(), 'notary-crawl-bench-'));
const storage = openSqlite(path.join(tmp, 'notary.sqlite'));
await migrateToLatest(storage);
const server = await serveDirectory(docDir);
try {
  const config = configSchema.parse({
    crawler: {
      seeds: [`${server.url}/index.html`],
      per_host_delay_ms: 0,
      per_host_concurrency: concurrency,
      max_concurrency: concurrency,
    },
  }).crawler;
  const cpuBefore = process.cpuUsage();
  const summary = await runCrawl({
    config,
    pages: new PageStore(storage.db),
    runs: new CrawlRunStore(storage.db),
    frontier: new FrontierStore(storage.db, storage.dialect),
    log: (level, msg) => {
      if (level !== 'debug') console.error(`[${level}] ${msg}`);
    },
  });
  const cpu = process.cpuUsage(cpuBefore);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  const counts = await new PageStore(storage.db).counts();
  console.log(
    JSON.stringify({
      corpus: docDir,
      concurrency,
      html_files: expected,
      pages_stored: counts.pages,
      fetched: summary.fetched,
      duplicates: summary.duplicates,
      skipped: summary.skipped,
      failed: summary.failed,
      http_requests: server.requests.length,
      elapsed_s: summary.elapsedMs / 1000,
      pages_per_second: summary.pagesPerSecond,
      // Crawler and static server share this process; pages per CPU-second is what the rate would be on one idle
      // core, and does not depend on how busy the machine is.
      cpu_s: Math.round(cpuSeconds * 100) / 100,
      pages_per_cpu_second: Math.round((summary.fetched / cpuSeconds) * 10) / 10,
      load_average_1m: os.loadavg()[0],
    }),
  );
} finally {
  await server.close();
  await storage.close();
  rmSync(tmp, { recursive: true, force: true });
}
