import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, runCli, waitForHealthz, type RunningServer } from '../testkit/cli.js';
import { fileAvailable } from '../testkit/components.js';
import { sharedModels, startFakeHub, writePins, type FakeHub } from '../testkit/fake-hub.js';
import { biEncoderDir } from '../testkit/models.js';
import { freePort } from '../testkit/postgres.js';
import { serveDirectory, type StaticServer } from '../testkit/serve-static.js';

/**
 * The README's run command, `bash scripts/quickstart.sh`, from a fresh clone with nothing named by hand (no NOTARY_*
 * variable but the hub's address and the test pin manifest): with the hub on 127.0.0.1 serving ../shared's files,
 * the first start fetches both models with progress and /healthz reports the cross-encoder and hybrid retrieval
 * with the bi-encoder; with no hub, one warning line says what is missing and the remedy, and the service answers
 * lexically. The clone shares this checkout's node_modules (its lock file dated back so the install step keeps it).
 */

const present = fileAvailable('the shared bi-encoder', path.join(biEncoderDir, 'onnx', 'model.onnx'));
const root = mkdtempSync(path.join(tmpdir(), 'notary-quickstart-models-'));
let hub: FakeHub;
let site: StaticServer;
let env: Record<string, string> = {};
let clone = '';

/** This process's environment without any NOTARY_* setting, so the quickstart runs on defaults. */
const cleanEnv = (): Record<string, string> =>
  Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => !e[0].startsWith('NOTARY_') && e[1] !== undefined));

/** `bash scripts/quickstart.sh --port P` in the clone, until /healthz answers (the first start fetches the models). */
async function quickstart(extraEnv: Record<string, string>): Promise<RunningServer> {
  const port = await freePort();
  const child = spawn('bash', ['scripts/quickstart.sh', '--port', String(port)], { cwd: clone, env: { ...cleanEnv(), ...extraEnv } });
  return waitForHealthz(child, `http://127.0.0.1:${port}`, 300_000, 'quickstart.sh');
}

interface Health {
  reranker: { kind: string; model: string; source: string; why?: string };
  models?: Record<string, unknown>;
  retrieval: { mode: string; why?: string | null; vectors?: { model: string } };
}

beforeAll(async () => {
  if (!present) return;
  const { pins, files } = sharedModels();
  hub = await startFakeHub(files);
  env = { NOTARY_MODEL_PINS: writePins(path.join(root, 'pins.json'), pins), NOTARY_HUB_URL: hub.url };
  clone = path.join(root, 'clone');
  const cloned = spawnSync('git', ['clone', '-q', '--depth', '1', `file://${repoRoot}`, clone], { encoding: 'utf8' });
  if (cloned.status !== 0) throw new Error(`git clone: ${cloned.stderr}`);
  symlinkSync(path.join(repoRoot, 'node_modules'), path.join(clone, 'node_modules'));
  utimesSync(path.join(clone, 'package-lock.json'), 0, 0);
  const siteDir = path.join(root, 'site');
  mkdirSync(siteDir);
  writeFileSync(path.join(siteDir, 'index.html'), '<html><head><title>Vacuum</title></head><body><h1>Vacuum</h1><p>' + 'vacuum reclaims storage occupied by dead tuples. '.repeat(30) + '</p></body></html>');
  site = await serveDirectory(siteDir);
});
afterAll(async () => {
  await hub?.close();
  await site?.close();
  rmSync(root, { recursive: true, force: true });
});

describe.runIf(present)('the first start fetches both models', () => {
  it('with the hub: progress, then the cross-encoder and hybrid retrieval with the bi-encoder', async () => {
    hub.throttle = 30 * 1024 * 1024;
    const server = await quickstart(env);
    hub.throttle = 0;
    try {
      const health = (await (await fetch(`${server.url}/healthz`)).json()) as Health;
      // /healthz names models only (sources and reasons are the operator's: notary status, the dashboard).
      expect(health.reranker).toMatchObject({ kind: 'cross-encoder' });
      expect(health.reranker.model).toMatch(/^ms-marco-MiniLM-L-6-v2/);
      expect(health.retrieval).toMatchObject({ mode: 'hybrid' });
      expect(health.models).toMatchObject({ retrieval: 'hybrid', bi_encoder: expect.stringMatching(/^all-MiniLM-L6-v2/), cross_encoder: expect.stringMatching(/^ms-marco-MiniLM-L-6-v2/) });
      const output = server.output();
      expect(output).toMatch(/models: fetching http:\/\/127\.0\.0\.1:\d+\/sentence-transformers\/all-MiniLM-L6-v2\/resolve\/test-revision\/onnx\/model\.onnx \(90\.\d MB\)/);
      expect(output).toMatch(/models: all-MiniLM-L6-v2 onnx\/model\.onnx: [\d.]+ MB of 90\.\d MB \(\d+%\), [\d.]+ MB\/s, \d+ s left/);
      expect(output).toMatch(/models: ms-marco-MiniLM-L-6-v2 onnx\/model\.onnx: 22\.\d MB of 22\.\d MB \(100%\), done/);
      expect(output).not.toMatch(/WARNING/);
    } finally {
      await server.stop();
    }
  });

  it('without a hub: one line with what is missing and the remedy, and a lexical service', async () => {
    const data = path.join(clone, 'data');
    rmSync(data, { recursive: true, force: true });
    const offline = { ...env, NOTARY_HUB_URL: 'http://127.0.0.1:9' };
    const crawl = await runCli(['--data', data, 'crawl', `${site.url}/index.html`, '--delay-ms', '0'], { ...offline, NOTARY_MODEL_DOWNLOAD: 'false' });
    expect(crawl.code, crawl.stderr).toBe(0);
    // The crawl above did not try the hub: the quickstart's first start does.
    const server = await quickstart(offline);
    try {
      const warnings = server.output().split('\n').filter((line) => line.includes('WARNING'));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(
        /^WARNING: models: LEXICAL FALLBACK, ranking is term overlap only over BM25 retrieval: no ms-marco-MiniLM-L-6-v2 and no all-MiniLM-L6-v2 in \/\S+\/models \(download from http:\/\/127\.0\.0\.1:9 failed \(cannot reach http:\/\/127\.0\.0\.1:9\/[^;]*\); next try after [\d-]+T[\d:]+Z\)\. Fix: notary models pull \(from http:\/\/127\.0\.0\.1:9; reranker\.hub_url or NOTARY_HUB_URL names a mirror\) or notary models install <dir> .* or NOTARY_RERANKER_MODEL=<dir> and NOTARY_EMBEDDING_MODEL=<dir>$/,
      );
      const health = (await (await fetch(`${server.url}/healthz`)).json()) as Health;
      expect(health.reranker).toMatchObject({ kind: 'lexical' });
      expect(health.retrieval).toMatchObject({ mode: 'bm25' });
    } finally {
      await server.stop();
    }
    const search = await runCli(['--data', data, 'search', 'vacuum', '--json'], offline);
    expect(search.code, search.stderr).toBe(0);
    expect((JSON.parse(search.stdout) as { results: unknown[] }).results.length).toBeGreaterThan(0);
    // The failure is remembered: the next command neither tries the hub again nor says more than one line.
    expect(search.stderr.split('\n').filter((line) => line.includes('WARNING'))).toHaveLength(1);
    expect(search.stderr).toMatch(/download failed at .*next try after/);
  });
});
