import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../cli/main.js';
import { allEnvBindings, configSection, loadConfig } from '../core/config.js';
import { allErrorCodes } from '../core/errors.js';
import { registerPlugins } from '../payments/plugin.js';
import { dummyConfig, dummyPlugin } from './dummy-mode/index.js';
import { apiTestConfig, startApi, type ApiHarness } from '../testkit/app.js';
import { repoRoot } from '../testkit/components.js';

// The one registration line: everything else the dummy mode adds comes from its own folder (test/dummy-mode/).
registerPlugins([dummyPlugin]);

/**
 * Item 1 of issue 31: a plug-in adds a config section (with its own rule and variable), an error code, a migration
 * with its repository, a CLI command and an OpenAPI security scheme, and pays for calls, without a line of shared code
 * naming it.
 */
describe('a payment mode that is one folder and one registration line', () => {
  let dir: string;
  let api: ApiHarness;
  const settings = { payments: { modes: { dummy: { enabled: true, label: 'DUM', tier: 'bulk' } } } };
  const post = (headers: Record<string, string> = {}) =>
    api.app.inject({ method: 'POST', url: '/v1/search', headers: { 'content-type': 'application/json', ...headers }, payload: JSON.stringify({ query: 'vacuum', depth: 1 }) });

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'notary-dummy-plugin-'));
    // The command line reads the same data folder's configuration.
    writeFileSync(path.join(dir, 'notary.json'), JSON.stringify({ reranker: { download: false }, embeddings: { model: 'off' }, tiers: { free: { requests_per_minute: 60, burst: 10 }, bulk: { requests_per_minute: 6000, burst: 100 } }, ...settings }));
    // The plug-in's CLI command runs its migration (a fresh database) and writes through its repository.
    await buildProgram().exitOverride().parseAsync(['node', 'notary', '--data', dir, 'dummy-wallets', 'w_alice', '5']);
    api = await startApi(apiTestConfig(dir, settings));
  }, 60_000);
  afterAll(async () => {
    await api?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('adds a config section with defaults, its own cross-field rule and its environment variable', () => {
    const file = path.join(dir, 'rule.json');
    writeFileSync(file, JSON.stringify({ payments: { modes: { dummy: { tier: 'nope' } } } }));
    expect(() => loadConfig({ env: {}, file })).toThrow(/payments\.modes\.dummy\.tier: tier "nope" is not defined in tiers/);
    writeFileSync(file, '{}');
    const config = loadConfig({ env: { NOTARY_DUMMY_LABEL: 'ZZZ' }, file });
    expect(configSection(config, dummyConfig)).toEqual({ enabled: false, label: 'ZZZ' });
    expect(allEnvBindings().map((b) => b.env)).toContain('NOTARY_DUMMY_LABEL');
  });

  it('adds an error code to the one registry, answered as a problem with its status', async () => {
    expect(allErrorCodes()['dummy_wallet_empty']).toEqual({ status: 402, title: 'The dummy wallet holds less than the price of this call', retryable: false });
    const res = await post({ 'x-dummy-wallet': 'w_bob' });
    expect(res.statusCode, res.body).toBe(402);
    expect(res.json()).toMatchObject({ code: 'dummy_wallet_empty', type: expect.stringMatching(/#dummy_wallet_empty$/) });
  });

  it('pays from the table its migration made and its CLI command funded; challenges with its own scheme', async () => {
    const paid = await post({ 'x-dummy-wallet': 'w_alice' });
    expect(paid.statusCode, paid.body).toBe(200);
    expect(paid.headers['x-dummy-settlement']).toBe('w_alice:1');
    const anonymous = await post();
    expect(anonymous.statusCode).toBe(402);
    expect(anonymous.headers['www-authenticate']).toContain('Dummy amount=1 asset=DUM');
    expect(anonymous.json()).toMatchObject({ challenges: { dummy: { header: 'X-Dummy-Wallet' } } });
  });

  it('adds its readiness check to what GET /readyz reports', async () => {
    expect(await api.runtime.readiness()).toMatchObject({ database: true, dummy: true });
  });

  it('describes its security scheme and error code in the OpenAPI document', async () => {
    const doc = (await api.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
      components: { securitySchemes: Record<string, unknown> };
      paths: Record<string, Record<string, { security?: Array<Record<string, unknown>> }>>;
      'x-error-codes': Record<string, unknown>;
    };
    expect(doc.components.securitySchemes['dummyWallet']).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-Dummy-Wallet' });
    expect(doc.paths['/v1/search']?.['post']?.security).toContainEqual({ dummyWallet: [] });
    expect(doc['x-error-codes']['dummy_wallet_empty']).toEqual({ status: 402, retryable: false });
  });

  it('is named by no product file: the shared code loops over the registered plug-ins', () => {
    const product = ['core', 'storage', 'payments', 'runtime', 'api', 'cli', 'accounts'];
    let named = '';
    try {
      named = execFileSync('git', ['grep', '-il', '-e', 'dummy-wallet', '-e', 'dummy_wallet', '-e', "'dummy'", '--', ...product], { cwd: repoRoot, encoding: 'utf8' });
    } catch (err) {
      if ((err as { status?: number }).status !== 1) throw err; // 1: nothing found
    }
    expect(named.split('\n').filter((f) => f && !/\.test\.ts$/.test(f))).toEqual([]);
  });
});
