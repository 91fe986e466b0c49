import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NotaryConfig } from '../core/config.js';
import { isNotaryError } from '../core/errors.js';
import type { PinnedModel } from './models.js';
import { loadReranker } from './resolve.js';
import type { OnnxReranker } from './onnx-reranker.js';
import { crossEncoderDir, tinyModelDir } from '../testkit/models.js';

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** Files the fake hub serves, by URL path. */
const hubFiles = new Map<string, Buffer>();
let hub: Server;
let hubUrl: string;
const hubRequests: string[] = [];

const realFiles = {
  'onnx/model.onnx': readFileSync(path.join(crossEncoderDir, 'onnx', 'model_random_weights_int8.onnx')),
  'tokenizer.json': readFileSync(path.join(crossEncoderDir, 'tokenizer.json')),
  'config.json': readFileSync(path.join(crossEncoderDir, 'config.json')),
};

function pinFor(name: string, repo: string, files: Record<string, Buffer>, overrides: Record<string, string> = {}): PinnedModel {
  for (const [file, bytes] of Object.entries(files)) hubFiles.set(`/${repo}/resolve/main/${file}`, bytes);
  return {
    name,
    kind: 'cross-encoder',
    repo,
    revision: 'main',
    onnxFile: 'onnx/model.onnx',
    files: Object.entries(files).map(([file, bytes]) => ({ path: file, sha256: overrides[file] ?? sha256(bytes), bytes: bytes.length })),
  };
}

function config(cacheDir: string, over: Partial<NotaryConfig['reranker']> = {}): NotaryConfig['reranker'] {
  return { cache_dir: cacheDir, download: true, download_retry_hours: 6, hub_url: hubUrl, threads: 1, batch_size: 8, max_seq_length: 128, spin_wait: false, ...over };
}

function recorder(): { log: (level: 'info' | 'warn', msg: string) => void; warnings: string[]; infos: string[] } {
  const warnings: string[] = [];
  const infos: string[] = [];
  return { log: (level, msg) => (level === 'warn' ? warnings : infos).push(msg), warnings, infos };
}

beforeAll(async () => {
  hub = createServer((req, res) => {
    hubRequests.push(req.url ?? '');
    const body = hubFiles.get(req.url ?? '');
    if (!body) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'content-length': body.length, 'content-type': 'application/octet-stream' });
    res.end(body);
  });
  await new Promise<void>((resolve) => hub.listen(0, '127.0.0.1', resolve));
  hubUrl = `http://127.0.0.1:${(hub.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => hub.close(() => resolve()));
});

const freshCache = (): string => mkdtempSync(path.join(tmpdir(), 'notary-model-cache-'));

describe('loadReranker: explicit model', () => {
  it('loads NOTARY_RERANKER_MODEL before reranker.model_dir', async () => {
    const { log, infos } = recorder();
    const reranker = await loadReranker(config(freshCache(), { model_dir: '/nonexistent' }), { env: { NOTARY_RERANKER_MODEL: crossEncoderDir }, log });
    expect(reranker.info).toMatchObject({ kind: 'cross-encoder', source: 'env' });
    expect(infos.join('\n')).toContain('one pair per run');
    await reranker.close();
  });

  it('loads reranker.model_dir, also when it names the .onnx file itself', async () => {
    const { log } = recorder();
    const byDir = await loadReranker(config(freshCache(), { model_dir: crossEncoderDir }), { env: {}, log });
    expect(byDir.info).toMatchObject({ kind: 'cross-encoder', source: 'config' });
    await byDir.close();
    const byFile = await loadReranker(config(freshCache(), { model_dir: path.join(crossEncoderDir, 'onnx', 'model_random_weights_int8.onnx') }), { env: {}, log });
    expect(byFile.info.source).toBe('config');
    expect(await byFile.score('q', ['p'])).toHaveLength(1);
    await byFile.close();
  });

  it('refuses an explicit broken directory with model_unavailable instead of falling back', async () => {
    for (const env of [{ NOTARY_RERANKER_MODEL: '/nonexistent/model' }, {}]) {
      const { log } = recorder();
      const noWeights = mkdtempSync(path.join(tmpdir(), 'notary-model-'));
      for (const file of ['config.json', 'tokenizer.json']) copyFileSync(path.join(crossEncoderDir, file), path.join(noWeights, file));
      const cfg = config(freshCache(), { model_dir: noWeights });
      let caught: unknown;
      try {
        await loadReranker(cfg, { env, log });
      } catch (err) {
        caught = err;
      }
      expect(isNotaryError(caught) && caught.code).toBe('model_unavailable');
      expect((caught as Error).message).toMatch(/NOTARY_RERANKER_MODEL|reranker\.model_dir/);
    }
  });
});

describe('loadReranker: embeddings.precision', () => {
  it('int8 loads the int8 copy of a bi-encoder from the cache, fp32 the exact file; without a copy one warning and fp32', async () => {
    const cacheDir = freshCache();
    const parent = mkdtempSync(path.join(tmpdir(), 'notary-precision-'));
    const exact = path.join(parent, 'mini-bi');
    mkdirSync(path.join(exact, 'onnx'), { recursive: true });
    const tiny = tinyModelDir('bi-encoder', parent);
    for (const f of ['tokenizer.json', 'config.json']) copyFileSync(path.join(tiny, f), path.join(exact, f));
    copyFileSync(path.join(tiny, 'model.onnx'), path.join(exact, 'onnx', 'model.onnx'));

    const none = recorder();
    const fallbackToExact = await loadReranker(config(cacheDir, { model_dir: exact }), { env: {}, log: none.log, precision: 'int8' });
    expect((fallbackToExact as OnnxReranker).onnxPath).toBe(path.join(exact, 'onnx', 'model.onnx'));
    // The tiny model has no MatMul weights: its int8 copy cannot be made, which is said once, with the fix.
    expect(none.warnings).toHaveLength(1);
    expect(none.warnings[0]).toContain(`cannot make the int8 copy of ${exact} in ${path.join(cacheDir, 'mini-bi-int8')}: the graph has no MatMul`);
    expect(none.warnings[0]).toContain(`embeddings.precision to fp32 (NOTARY_EMBEDDING_PRECISION=fp32)`);
    expect(none.warnings[0]).toContain(`bash scripts/quantize-minilm.sh --src ${exact} --out ${path.join(cacheDir, 'mini-bi-int8')}`);
    expect(fallbackToExact.info.why).toContain('fp32 (no int8 copy: it could not be made)');
    expect(readdirSync(cacheDir).filter((f) => f.includes('mini-bi'))).toEqual([]); // no half-made folder, no lock left
    await fallbackToExact.close();

    // An int8 copy in the cache, as `notary models install <dir> --name mini-bi-int8` leaves it.
    const copy = path.join(cacheDir, 'mini-bi-int8');
    mkdirSync(path.join(copy, 'onnx'), { recursive: true });
    for (const f of ['tokenizer.json', 'config.json']) copyFileSync(path.join(exact, f), path.join(copy, f));
    copyFileSync(path.join(exact, 'onnx', 'model.onnx'), path.join(copy, 'onnx', 'model_int8.onnx'));
    const quiet = recorder();
    const int8 = await loadReranker(config(cacheDir, { model_dir: exact }), { env: {}, log: quiet.log, precision: 'int8' });
    expect((int8 as OnnxReranker).onnxPath).toBe(path.join(copy, 'onnx', 'model_int8.onnx'));
    expect(int8.info.why).toContain('its int8 copy');
    expect(quiet.warnings).toEqual([]);
    await int8.close();

    const fp32 = await loadReranker(config(cacheDir, { model_dir: exact }), { env: {}, log: quiet.log, precision: 'fp32' });
    expect((fp32 as OnnxReranker).onnxPath).toBe(path.join(exact, 'onnx', 'model.onnx'));
    await fp32.close();
    rmSync(parent, { recursive: true, force: true });
  });
});

describe('loadReranker: cache and download', () => {
  it('downloads the pinned files into the cache, then loads from the cache without network', async () => {
    const cacheDir = freshCache();
    const pins = [pinFor('test-model', 'test/good-model', realFiles)];
    const first = recorder();
    const downloaded = await loadReranker(config(cacheDir), { env: {}, log: first.log, pins });
    expect(downloaded.info).toMatchObject({ kind: 'cross-encoder', source: 'download' });
    expect(first.warnings).toEqual([]);
    expect(readFileSync(path.join(cacheDir, 'test-model', 'onnx', 'model.onnx')).equals(realFiles['onnx/model.onnx'])).toBe(true);
    expect(readdirSync(path.join(cacheDir, 'test-model', 'onnx'))).toEqual(['model.onnx']);
    const scores = await downloaded.score('vacuum', ['vacuum reclaims storage']);
    await downloaded.close();

    const requestsBefore = hubRequests.length;
    const second = recorder();
    const noNetwork: typeof fetch = async () => {
      throw new Error('the network must not be used when the cache is complete');
    };
    const cached = await loadReranker(config(cacheDir), { env: {}, log: second.log, pins, fetch: noNetwork });
    expect(cached.info).toMatchObject({ kind: 'cross-encoder', source: 'cache' });
    expect(hubRequests.length).toBe(requestsBefore);
    expect(await cached.score('vacuum', ['vacuum reclaims storage'])).toEqual(scores);
    await cached.close();
  });

  it('refuses a file whose sha256 does not match the pin, deletes it and falls back loudly', async () => {
    const cacheDir = freshCache();
    const fake = { 'onnx/model.onnx': Buffer.from('this is not the pinned model') };
    const pins = [pinFor('bad-model', 'test/bad-model', fake, { 'onnx/model.onnx': 'ab'.repeat(32) })];
    const { log, warnings } = recorder();
    const reranker = await loadReranker(config(cacheDir), { env: {}, log, pins });
    expect(reranker.info).toMatchObject({ kind: 'lexical', model: 'lexical', source: 'fallback' });
    expect(reranker.info.why).toMatch(/REFUSED .*sha256/);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/LEXICAL FALLBACK.*REFUSED .*sha256/);
    const onnxDir = path.join(cacheDir, 'bad-model', 'onnx');
    expect(existsSync(onnxDir) ? readdirSync(onnxDir) : []).toEqual([]);
  });

  it('falls back to lexical quickly with a warning when the hub cannot be reached', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const deadUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const { log, warnings } = recorder();
    const started = Date.now();
    const reranker = await loadReranker(config(freshCache(), { hub_url: deadUrl }), { env: {}, log, connectTimeoutMs: 2_000 });
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(reranker.info.kind).toBe('lexical');
    // One line: what happened, until when it is not retried, and the remedy (not advice that is already the setting).
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/LEXICAL FALLBACK.*cannot reach.*next try after .*Fix: notary models pull .* or notary models install <dir> .*--name ms-marco-MiniLM-L-6-v2.* or NOTARY_RERANKER_MODEL=<dir>$/);
    expect(warnings[0]).not.toContain('\n');
    expect(warnings[0]).not.toContain('download=true');
  });

  it('gives up on a hub that accepts the connection but never answers, within the connect timeout', async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { log } = recorder();
    const started = Date.now();
    const reranker = await loadReranker(config(freshCache(), { hub_url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}` }), {
      env: {},
      log,
      connectTimeoutMs: 300,
    });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(reranker.info.kind).toBe('lexical');
    silent.closeAllConnections();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });

  it('does not download when download is false, and says so', async () => {
    const { log, warnings } = recorder();
    const pins = [pinFor('never', 'test/never', realFiles)];
    const before = hubRequests.length;
    const reranker = await loadReranker(config(freshCache(), { download: false }), { env: {}, log, pins });
    expect(reranker.info.kind).toBe('lexical');
    expect(hubRequests.length).toBe(before);
    expect(warnings.join('\n')).toContain('reranker.download is false');
    expect(warnings.join('\n')).toContain('NOTARY_MODEL_DOWNLOAD=true');
  });

  it('remembers a failed download: no retry by the next commands until retry_after, no empty folders, one warning line', async () => {
    const cacheDir = freshCache();
    const pins = [pinFor('flaky-model', 'test/flaky-model', { ...realFiles, 'onnx/model.onnx': Buffer.from('x') }, { 'onnx/model.onnx': 'cd'.repeat(32) })];
    // The hub has no such file: 404 for the model file.
    hubFiles.delete('/test/flaky-model/resolve/main/onnx/model.onnx');
    const first = recorder();
    const before = hubRequests.length;
    const failed = await loadReranker(config(cacheDir), { env: {}, log: first.log, pins });
    expect(failed.info.kind).toBe('lexical');
    expect(hubRequests.length).toBeGreaterThan(before);
    const marker = JSON.parse(readFileSync(path.join(cacheDir, 'flaky-model.download-failed.json'), 'utf8')) as { retry_after: string; reason: string };
    expect(Date.parse(marker.retry_after) - Date.now()).toBeGreaterThan(5.9 * 3_600_000);
    expect(marker.reason).toMatch(/HTTP 404/);
    // Nothing but the marker: no empty model folder.
    expect(readdirSync(cacheDir)).toEqual(['flaky-model.download-failed.json']);
    expect(first.warnings).toHaveLength(1);

    const second = recorder();
    const afterFirst = hubRequests.length;
    const again = await loadReranker(config(cacheDir), { env: {}, log: second.log, pins });
    expect(again.info.kind).toBe('lexical');
    expect(hubRequests.length).toBe(afterFirst);
    expect(second.warnings).toHaveLength(1);
    expect(second.warnings[0]).toMatch(/download failed at .*HTTP 404.*next try after/);
    expect(again.info.why).toMatch(/next try after/);

    // After retry_after the download is tried again.
    writeFileSync(path.join(cacheDir, 'flaky-model.download-failed.json'), JSON.stringify({ ...marker, retry_after: new Date(Date.now() - 1000).toISOString() }));
    await loadReranker(config(cacheDir), { env: {}, log: recorder().log, pins });
    expect(hubRequests.length).toBeGreaterThan(afterFirst);
  });

  it('replaces a cached file that no longer matches its pin', async () => {
    const cacheDir = freshCache();
    const pins = [pinFor('repair-model', 'test/repair-model', realFiles)];
    const { log } = recorder();
    await (await loadReranker(config(cacheDir), { env: {}, log, pins })).close();
    const tokenizerFile = path.join(cacheDir, 'repair-model', 'tokenizer.json');
    rmSync(tokenizerFile);
    const before = hubRequests.length;
    const repaired = await loadReranker(config(cacheDir), { env: {}, log, pins });
    expect(repaired.info.source).toBe('download');
    expect(hubRequests.slice(before)).toEqual(['/test/repair-model/resolve/main/tokenizer.json']);
    await repaired.close();
  });
});
