import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { startAddonWorker } from '../core/index.js';
import type { AnnWorkerConfig } from './ann-worker.js';
import type { PostingsBuildConfig } from './backends/fts5/postings-worker.js';
import type { Fts5ReaderConfig } from './backends/fts5/reader-worker.js';

// Each worker that loads a native addon must signal it (core/addon-worker.ts): one that does not makes every close
// wait the full limit before terminating it.
describe('the workers that load a native addon signal it', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'notary-addon-workers-'));
  const file = path.join(dir, 'index.sqlite');
  new BetterSqlite3(file).exec('CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)').close();
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const reader: Fts5ReaderConfig = { file };
  const postings: Partial<PostingsBuildConfig> = { file, table: 'missing', facetsColumn: 'facets', pageIdColumn: null };
  const ann: AnnWorkerConfig = { dimensions: 8, connectivity: 16, expansionAdd: 64, expansionSearch: 64, buildThreads: 1 };
  const cases: Array<[string, URL, object]> = [
    ['the FTS5 reader', new URL('./backends/fts5/reader-worker.ts', import.meta.url), reader],
    ['the postings build (on a table it then fails to read)', new URL('./backends/fts5/postings-worker.ts', import.meta.url), postings],
    ['the vector graph', new URL('./ann-worker.ts', import.meta.url), ann],
  ];
  it.each(cases)('%s', async (_name, url, data) => {
    const thread = startAddonWorker(url, data);
    thread.worker.on('error', () => undefined);
    await expect.poll(() => thread.loaded, { timeout: 20_000, interval: 20 }).toBe(true);
    await thread.stop();
  });
});
