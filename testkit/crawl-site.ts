import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { configSchema, type ConfigInput } from '../core/config.js';
import { CrawlRunStore } from '../storage/crawl-runs.js';
import { FrontierStore } from '../storage/frontier.js';
import { migrateToLatest, openSqlite, type Storage } from '../storage/db.js';
import { PageStore } from '../storage/pages.js';
import type { CrawlerConfig } from '../crawler/session.js';
import { serveDirectory, type StaticServer } from './serve-static.js';

/** A temporary directory of site files, written from a path -> content map. */
export function writeSite(files: Record<string, string | Buffer>, root?: string): string {
  const dir = root ?? mkdtempSync(path.join(tmpdir(), 'notary-site-'));
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(dir, name);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, content);
  }
  return dir;
}

export function html(title: string, body: string, head = ''): string {
  return `<!doctype html><html><head><title>${title}</title>${head}</head><body><h1>${title}</h1>${body}</body></html>`;
}

export interface TestDb {
  storage: Storage;
  pages: PageStore;
  runs: CrawlRunStore;
  frontier: FrontierStore;
  close(): Promise<void>;
}

/** A real SQLite file in a temporary directory, migrated. */
export async function openTestDb(): Promise<TestDb> {
  const dir = mkdtempSync(path.join(tmpdir(), 'notary-crawl-db-'));
  const storage = openSqlite(path.join(dir, 'notary.sqlite'));
  await migrateToLatest(storage);
  return {
    storage,
    pages: new PageStore(storage.db),
    runs: new CrawlRunStore(storage.db),
    frontier: new FrontierStore(storage.db, storage.dialect),
    close: async () => {
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Crawler config for loopback tests: no politeness delay, short timeouts. */
export function crawlerConfig(overrides: NonNullable<ConfigInput['crawler']> = {}): CrawlerConfig {
  return configSchema.parse({
    crawler: { per_host_delay_ms: 0, per_host_concurrency: 8, max_concurrency: 8, request_timeout_ms: 5_000, ...overrides },
  }).crawler;
}

/**
 * Served sites and test databases for one test file, closed and removed after each test:
 * `const resources = crawlTestResources(); afterEach(resources.cleanup);`. `cleanups` takes further closers.
 */
export function crawlTestResources() {
  const cleanups: Array<() => Promise<void> | void> = [];
  return {
    cleanups,
    async site(files: Record<string, string | Buffer>, options?: { etag?: boolean }): Promise<{ dir: string; server: StaticServer }> {
      const dir = writeSite(files);
      const server = await serveDirectory(dir, options);
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      cleanups.push(() => server.close());
      return { dir, server };
    },
    async db(): Promise<TestDb> {
      const testDb = await openTestDb();
      cleanups.push(() => testDb.close());
      return testDb;
    },
    async cleanup(): Promise<void> {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    },
  };
}
