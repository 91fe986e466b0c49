import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isNotaryError } from '../core/errors.js';
import { sharedModels, startFakeHub, type FakeHub } from '../testkit/fake-hub.js';
import { describeProgress, downloadPinnedModel, partialFile, type DownloadProgress } from './download.js';
import { acquireModelLock, modelLockFile } from './model-lock.js';
import type { PinnedModel } from './models.js';

/**
 * The download path against a hub on 127.0.0.1 serving ../shared's model files under a test pin manifest (the
 * files' own sha256): resume after a cut, a wrong hash, a 404, a stalled server, progress, the lock.
 */

const { pins, files } = sharedModels();
const [crossEncoder, biEncoder] = pins as [PinnedModel, PinnedModel];
const onnxUrl = (m: PinnedModel): string => `/${m.repo}/resolve/${m.revision}/onnx/model.onnx`;
const onnxBytes = (m: PinnedModel): Buffer => files.get(onnxUrl(m)) as Buffer;
let hub: FakeHub;
const freshCache = (): string => mkdtempSync(path.join(tmpdir(), 'notary-download-'));
const quiet = { log: () => undefined };

async function failure(work: Promise<unknown>): Promise<Error> {
  try {
    await work;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a failure');
}

beforeAll(async () => {
  hub = await startFakeHub(files);
});
afterAll(async () => {
  await hub.close();
});

describe('downloadPinnedModel', () => {
  it('resumes an interrupted transfer with a Range request, without fetching the first part again, and checks the whole file', async () => {
    const cacheDir = freshCache();
    const total = onnxBytes(biEncoder).length;
    const cutAfter = 30 * 1024 * 1024;
    hub.behave = (req) => (req.url === onnxUrl(biEncoder) && !req.headers.range ? { kind: 'cut', after: cutAfter } : { kind: 'serve' });
    hub.requests.length = 0;
    const cut = await failure(downloadPinnedModel(hub.url, cacheDir, biEncoder, quiet));
    expect(cut.message).toMatch(/interrupted after \d+ of \d+ bytes .*the next try resumes from there/);
    const target = path.join(cacheDir, biEncoder.name, 'onnx', 'model.onnx');
    expect(existsSync(target)).toBe(false);
    const kept = statSync(partialFile(target)).size;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThanOrEqual(cutAfter);

    hub.requests.length = 0;
    const progress: DownloadProgress[] = [];
    await downloadPinnedModel(hub.url, cacheDir, biEncoder, { ...quiet, onProgress: (p) => progress.push(p) });
    const resumed = hub.requests.filter((r) => r.url === onnxUrl(biEncoder));
    expect(resumed).toHaveLength(1);
    expect(resumed[0]?.range).toBe(`bytes=${kept}-`);
    // Only the rest crossed the wire the second time.
    expect(resumed[0]?.sent).toBe(total - kept);
    expect(readFileSync(target).equals(onnxBytes(biEncoder))).toBe(true);
    expect(existsSync(partialFile(target))).toBe(false);
    const last = progress.filter((p) => p.file === 'onnx/model.onnx').at(-1);
    expect(last).toMatchObject({ received: total, total, resumedFrom: kept, done: true });
    expect(describeProgress(last as DownloadProgress)).toMatch(/^all-MiniLM-L6-v2 onnx\/model\.onnx: 90\.\d MB of 90\.\d MB \(100%\), resumed at 3\d\.\d MB, done in \d+\.\d s( \([\d.]+ MB\/s\))?$/);
    hub.behave = () => ({ kind: 'serve' });
  });

  it('starts over when the server ignores Range, and when a trickle outlasts the transfer cap', async () => {
    const cacheDir = freshCache();
    hub.behave = (req) => (req.url === onnxUrl(crossEncoder) && !req.headers.range ? { kind: 'cut', after: 4 * 1024 * 1024 } : { kind: 'ignore-range' });
    await failure(downloadPinnedModel(hub.url, cacheDir, crossEncoder, quiet));
    hub.requests.length = 0;
    await downloadPinnedModel(hub.url, cacheDir, crossEncoder, quiet);
    expect(hub.requests[0]?.range).toMatch(/^bytes=\d+-$/);
    expect(readFileSync(path.join(cacheDir, crossEncoder.name, 'onnx', 'model.onnx')).equals(onnxBytes(crossEncoder))).toBe(true);

    hub.behave = () => ({ kind: 'serve' });
    hub.throttle = 1024 * 1024;
    const started = Date.now();
    const slow = await failure(downloadPinnedModel(hub.url, freshCache(), crossEncoder, { ...quiet, transferTimeoutMs: 500 }));
    hub.throttle = 0;
    expect(Date.now() - started).toBeLessThan(2_500);
    expect(slow.message).toMatch(/not done within 500 ms/);
  });

  it('refuses a file whose sha256 differs from its pin, deletes it, and says so', async () => {
    const cacheDir = freshCache();
    const wrong: PinnedModel = { ...crossEncoder, files: crossEncoder.files.map((f) => (f.path === 'config.json' ? { ...f, sha256: 'ab'.repeat(32) } : f)) };
    const err = await failure(downloadPinnedModel(hub.url, cacheDir, wrong, quiet));
    expect(isNotaryError(err) && err.code).toBe('model_unavailable');
    expect(err.message).toMatch(/^REFUSED http:\/\/127\.0\.0\.1:\d+\/cross-encoder\/.*\/config\.json: sha256 [0-9a-f]{64} \(715 bytes\) does not match the pinned sha256 (ab){32} \(715 bytes\); the file was deleted$/);
    const dir = path.join(cacheDir, crossEncoder.name);
    expect(existsSync(path.join(dir, 'config.json'))).toBe(false);
    expect(existsSync(partialFile(path.join(dir, 'config.json')))).toBe(false);
    // The files before it passed their pins and stay; the lock is released.
    expect(readdirSync(dir).sort()).toEqual(['onnx', 'tokenizer.json']);
    expect(existsSync(modelLockFile(cacheDir, crossEncoder.name))).toBe(false);
  });

  it('reports a 404 with the URL and leaves no empty folders', async () => {
    const cacheDir = freshCache();
    const missing: PinnedModel = { ...crossEncoder, repo: 'nobody/no-such-model' };
    const err = await failure(downloadPinnedModel(hub.url, cacheDir, missing, quiet));
    expect(err.message).toMatch(/\/nobody\/no-such-model\/resolve\/test-revision\/onnx\/model\.onnx answered HTTP 404$/);
    expect(readdirSync(cacheDir)).toEqual([]);
  });

  it('gives up on a server that accepts and never answers, and on one that stalls mid-file, within their timeouts', async () => {
    hub.behave = () => ({ kind: 'silent' });
    let started = Date.now();
    const silent = await failure(downloadPinnedModel(hub.url, freshCache(), crossEncoder, { ...quiet, connectTimeoutMs: 300 }));
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(silent.message).toMatch(/cannot reach .*no answer within 300 ms/);

    hub.behave = () => ({ kind: 'stall', after: 1024 * 1024 });
    const cacheDir = freshCache();
    started = Date.now();
    const stalled = await failure(downloadPinnedModel(hub.url, cacheDir, crossEncoder, { ...quiet, connectTimeoutMs: 300, idleTimeoutMs: 400 }));
    expect(Date.now() - started).toBeLessThan(2_500);
    expect(stalled.message).toMatch(/interrupted after 1048576 of \d+ bytes \(.*no data for 400 ms.*\); the next try resumes from there/);
    hub.behave = () => ({ kind: 'serve' });
    // What the stalled transfer got is kept for the next try.
    expect(statSync(partialFile(path.join(cacheDir, crossEncoder.name, 'onnx', 'model.onnx'))).size).toBe(1024 * 1024);
  });

  it('reports progress with bytes, a rate and time left once there is a rate, and none before', async () => {
    const cacheDir = freshCache();
    hub.throttle = 40 * 1024 * 1024;
    const progress: DownloadProgress[] = [];
    try {
      await downloadPinnedModel(hub.url, cacheDir, crossEncoder, { ...quiet, onProgress: (p) => progress.push(p), progressEveryMs: 100 });
    } finally {
      hub.throttle = 0;
    }
    const onnx = progress.filter((p) => p.file === 'onnx/model.onnx');
    expect(onnx.length).toBeGreaterThan(2);
    const midway = onnx.find((p) => !p.done && p.bytesPerSec !== undefined);
    expect(midway).toBeDefined();
    expect(describeProgress(midway as DownloadProgress)).toMatch(/^ms-marco-MiniLM-L-6-v2 onnx\/model\.onnx: [\d.]+ MB of 22\.\d MB \(\d+%\), [\d.]+ MB\/s, \d+ s left$/);
    // No rate is made up before half a second of transfer.
    expect(describeProgress({ model: 'm', file: 'f', received: 10, total: 100, resumedFrom: 0, done: false })).toBe('m f: 0.0 MB of 0.0 MB (10%)');
  });

  it('waits for the lock another process holds, and takes over a lock whose owner is gone', async () => {
    const cacheDir = freshCache();
    const release = await acquireModelLock(cacheDir, 'x', { timeoutMs: 1_000 });
    const waited = await failure(acquireModelLock(cacheDir, 'x', { timeoutMs: 400 }));
    expect(waited.message).toMatch(/another process \(pid \d+ on .*\) has been fetching x for more than 0 s/);
    release();
    expect(existsSync(modelLockFile(cacheDir, 'x'))).toBe(false);
    // A lock left by a process that no longer runs.
    writeFileSync(modelLockFile(cacheDir, 'x'), JSON.stringify({ pid: 2 ** 22 + 17, host: (await import('node:os')).hostname(), since: 'then' }));
    const again = await acquireModelLock(cacheDir, 'x', { timeoutMs: 1_000 });
    again();
  });
});
