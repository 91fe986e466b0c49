import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildProgram } from '../cli/main.js';
import { loadConfig, type ConfigInput } from '../core/config.js';
import { Runtime, silentLog } from '../runtime/index.js';
import { registeredIndexBackends } from '../runtime/plugins.js';
import { apiIndexDocs, apiTestConfig } from '../testkit/app.js';
import { available } from '../testkit/components.js';
import { meilisearchAvailable, startMeilisearch, type TestMeilisearch } from '../testkit/meilisearch.js';
import { createDatabase, startPostgres, type TestPostgres } from '../testkit/postgres.js';

/**
 * The real index backends as plug-ins (issue 31, item 1): each is opened through its registered descriptor from
 * `indexer.backend`, with its own section, rules and commands, and serves what it served when runtime/backends.ts
 * named it.
 */
describe('the registered index backends', () => {
  const empty = mkdtempSync(path.join(tmpdir(), 'notary-backends-config-'));
  afterAll(() => rmSync(empty, { recursive: true, force: true }));
  const load = (env: Record<string, string>) => loadConfig({ env, overrides: { data_dir: empty } });

  it('are the values of indexer.backend, the embedded one first (the default)', () => {
    expect(registeredIndexBackends().map((b) => b.name)).toEqual(['sqlite-fts5', 'postgres', 'meilisearch']);
    expect(load({}).indexer.backend).toBe('sqlite-fts5');
  });

  it('keep their cross-field rules, named as before', () => {
    expect(() => load({ NOTARY_INDEX_BACKEND: 'postgres' })).toThrow(/indexer\.backend: postgres needs storage\.driver postgres \(NOTARY_STORAGE=postgres\)/);
    expect(() => load({ NOTARY_INDEX_BACKEND: 'meilisearch' })).toThrow(/indexer\.meilisearch\.url: required when indexer\.backend is meilisearch \(NOTARY_MEILISEARCH_URL\)/);
    expect(() => load({ NOTARY_INDEX_BACKEND: 'elastic' })).toThrow(/indexer\.backend: .*"sqlite-fts5"\|"postgres"\|"meilisearch"/);
    const config = load({ NOTARY_STORAGE: 'postgres', NOTARY_DATABASE_URL: 'postgres://x@127.0.0.1/x', NOTARY_INDEX_BACKEND: 'postgres', NOTARY_POSTGRES_RANKING: 'ts_rank' });
    expect(config.indexer).toMatchObject({ backend: 'postgres', postgres: { ranking: 'ts_rank' }, meilisearch: { index: 'notary_passages' } });
  });
});

async function searchesThrough(dir: string, overrides: ConfigInput, name: string): Promise<void> {
  const runtime = await Runtime.open(apiTestConfig(dir, overrides), { env: {}, log: silentLog });
  try {
    expect(runtime.index.name).toBe(name);
    await runtime.index.upsert(apiIndexDocs());
    expect((await runtime.index.search('autovacuum daemon', { limit: 3 }))[0]?.url).toBe('https://docs.test/autovacuum');
    expect(await runtime.readiness()).toMatchObject({ index: true });
  } finally {
    await runtime.close();
  }
}

describe.runIf(available('PostgreSQL (Debian)', existsSync('/usr/lib/postgresql')))('postgres, opened from its descriptor', () => {
  let server: TestPostgres | undefined;
  let dir: string;
  beforeAll(async () => {
    server = await startPostgres();
    dir = mkdtempSync(path.join(tmpdir(), 'notary-backend-pg-'));
  }, 120_000);
  afterAll(() => {
    server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('serves search from PostgreSQL full text', async () => {
    const url = await createDatabase(server!.url, `notary_backend_${process.pid}`);
    await searchesThrough(dir, { storage: { driver: 'postgres', postgres_url: url }, indexer: { backend: 'postgres' } }, 'postgres-fts');
  }, 120_000);
});

describe.runIf(meilisearchAvailable())('meilisearch, opened from its descriptor', () => {
  let server: TestMeilisearch | undefined;
  let dir: string;
  beforeAll(async () => {
    server = await startMeilisearch();
    dir = mkdtempSync(path.join(tmpdir(), 'notary-backend-meili-'));
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('serves search from Meilisearch, and adds `notary index search-key`', async () => {
    const indexer = { backend: 'meilisearch', meilisearch: { url: server!.url, api_key: server!.masterKey, index: 'notary_backend_test' } };
    await searchesThrough(dir, { indexer }, 'meilisearch');
    const write = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const env = { NOTARY_INDEX_BACKEND: 'meilisearch', NOTARY_MEILISEARCH_URL: server!.url, NOTARY_MEILISEARCH_API_KEY: server!.masterKey, NOTARY_MEILISEARCH_INDEX: 'notary_backend_test' };
    const saved = { ...process.env };
    Object.assign(process.env, env);
    try {
      await buildProgram().exitOverride().parseAsync(['node', 'notary', '--data', dir, 'index', 'search-key']);
      const printed = write.mock.calls.map(([chunk]) => String(chunk)).join('');
      expect(printed).toMatch(/^[0-9a-f]{32,}\n$/);
    } finally {
      write.mockRestore();
      for (const key of Object.keys(env)) {
        if (saved[key] === undefined) delete process.env[key];
        else process.env[key] = saved[key];
      }
    }
  }, 120_000);
});
