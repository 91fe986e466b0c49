import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildProgram } from '../cli/main.js';
import { allEnvBindings, configSchema, configSection, loadConfig } from '../core/config.js';
import { allErrorCodes, isNotaryError } from '../core/errors.js';
import { registerIndexBackends } from '../indexer/backend-plugin.js';
import { searchIndexContract } from '../indexer/search-index.contract.js';
import { migrateToLatest, openSqlite, type Storage } from '../storage/db.js';
import { dummyBackend, dummyIndexConfig } from './dummy-backend/index.js';
import { apiTestConfig, startApi, type ApiHarness } from '../testkit/app.js';
import { repoRoot } from '../testkit/components.js';

// The one registration line: everything else the dummy backend adds comes from its own folder (test/dummy-backend/).
registerIndexBackends([dummyBackend]);

/**
 * Item 1 of issue 31: an index backend adds a config section (with its own rule and variable), an error code, a
 * migration, a CLI command and the factory of its search index, which passes the SearchIndex contract and serves
 * /v1/search, without a line of shared code naming it.
 */
describe('an index backend that is one folder and one registration line', () => {
  let dir: string;
  let api: ApiHarness;
  const settings = { indexer: { backend: 'dummy' } };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'notary-dummy-backend-'));
    writeFileSync(path.join(dir, 'notary.json'), JSON.stringify({ reranker: { download: false }, embeddings: { model: 'off' }, ...settings }));
    api = await startApi(apiTestConfig(dir, settings));
  }, 60_000);
  afterAll(async () => {
    await api?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is a value of indexer.backend, with a config section, its own cross-field rule and its environment variable', () => {
    const file = path.join(dir, 'rule.json');
    writeFileSync(file, JSON.stringify({ indexer: { backend: 'dummy', dummy: { heading_weight: 5 } } }));
    expect(() => loadConfig({ env: {}, file })).toThrow(/indexer\.dummy\.heading_weight: must not exceed title_weight/);
    writeFileSync(file, JSON.stringify({ indexer: { backend: 'nope' } }));
    expect(() => loadConfig({ env: {}, file })).toThrow(/indexer\.backend: .*"dummy"/);
    writeFileSync(file, '{}');
    const config = loadConfig({ env: { NOTARY_INDEX_BACKEND: 'dummy', NOTARY_DUMMY_INDEX_MAX_DOCUMENTS: '7' }, file });
    expect(config.indexer.backend).toBe('dummy');
    expect(configSection(config, dummyIndexConfig)).toEqual({ title_weight: 3, heading_weight: 2, max_documents: 7 });
    expect(allEnvBindings().map((b) => b.env)).toContain('NOTARY_DUMMY_INDEX_MAX_DOCUMENTS');
    // The first registered backend stays the default.
    expect(loadConfig({ env: {}, file }).indexer.backend).not.toBe('dummy');
  });

  it('adds an error code to the one registry, thrown by its index', async () => {
    expect(allErrorCodes()['dummy_index_full']).toEqual({ status: 507, title: 'The dummy index holds indexer.dummy.max_documents passages already', retryable: false });
    const config = configSchema.parse({ ...apiTestConfig(dir, settings), indexer: { backend: 'dummy', dummy: { max_documents: 1 } } });
    const opened = await dummyBackend.open({ config, storage: api.runtime.storage });
    const full = await opened.index.upsert([{ id: 99, pageId: 99, url: 'https://docs.test/x', title: 'x', headingPath: '', text: 'x' }]).catch((err: unknown) => err);
    expect(isNotaryError(full) && full.code).toBe('dummy_index_full');
  });

  it('serves POST /v1/search from its tables (made by its migration)', async () => {
    expect(api.runtime.index.name).toBe('dummy');
    const tenant = await api.runtime.accounts.createTenant('dummy-backend', { credits: 10, tier: 'bulk' });
    const { key } = await api.runtime.accounts.createKey(tenant.id);
    const res = await api.app.inject({
      method: 'POST',
      url: '/v1/search',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      payload: JSON.stringify({ query: 'autovacuum daemon', depth: 1 }),
    });
    expect(res.statusCode, res.body).toBe(200);
    expect((res.json() as { results: Array<{ url: string }> }).results[0]?.url).toBe('https://docs.test/autovacuum');
    const rows = await api.runtime.storage.db.selectFrom('dummy_index_passages' as never).select('id' as never).execute();
    expect(rows).toHaveLength(4);
    expect(await api.runtime.readiness()).toMatchObject({ index: true });
  });

  it('adds its command under notary index', async () => {
    const write = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      await buildProgram().exitOverride().parseAsync(['node', 'notary', '--data', dir, 'index', 'dummy-count']);
      expect(write.mock.calls.map(([chunk]) => String(chunk))).toContain('4 passages in the dummy index\n');
    } finally {
      write.mockRestore();
    }
  });

  it('is named by no product file: the shared code loops over the registered backends', () => {
    const product = ['core', 'storage', 'indexer', 'payments', 'runtime', 'api', 'cli', 'search'];
    let named = '';
    try {
      named = execFileSync('git', ['grep', '-il', '-e', 'dummy_index', '-e', 'dummy-backend', '-e', "'dummy'", '--', ...product], { cwd: repoRoot, encoding: 'utf8' });
    } catch (err) {
      if ((err as { status?: number }).status !== 1) throw err; // 1: nothing found
    }
    expect(named.split('\n').filter((f) => f && !/\.test\.ts$/.test(f))).toEqual([]);
  });
});

// Its search index keeps the contract every backend keeps, on a database its migration set up.
const storages: Storage[] = [];
afterAll(async () => {
  for (const storage of storages) await storage.close();
});
searchIndexContract('dummy (test/dummy-backend/)', async () => {
  const storage = openSqlite(':memory:');
  storages.push(storage);
  await migrateToLatest(storage);
  const config = configSchema.parse({ indexer: { backend: 'dummy' }, reranker: { download: false }, embeddings: { model: 'off' } });
  return (await dummyBackend.open({ config, storage })).index;
});
