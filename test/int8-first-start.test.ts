import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../testkit/cli.js';
import { biEncoderDir } from '../testkit/models.js';

/**
 * The first start on a fresh machine: embeddings.precision int8 (the default), a model folder with only the fp32
 * onnx/model.onnx (the shared all-MiniLM-L6-v2, as the hub publishes it), an empty model cache. Two commands started
 * at once make the int8 copy once (the model lock), both then load it, and the next start finds it.
 */

const dataDir = mkdtempSync(path.join(tmpdir(), 'notary-int8-first-'));
const cacheDir = path.join(dataDir, 'fresh-cache');
const env = {
  NOTARY_RERANKER_MODEL: biEncoderDir,
  NOTARY_MODEL_CACHE_DIR: cacheDir,
  NOTARY_MODEL_DOWNLOAD: 'false',
  NOTARY_EMBEDDING_PRECISION: 'int8',
  NOTARY_EMBEDDING_MODEL: 'off',
};
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const why = (stdout: string): string => (JSON.parse(stdout) as { reranker: { why: string } }).reranker.why;

describe('the int8 copy at the first start', () => {
  it('is made once by two processes starting at once, then loaded by both and by the next start', async () => {
    expect(existsSync(path.join(biEncoderDir, 'onnx', 'model_int8.onnx'))).toBe(false);
    const [a, b] = await Promise.all([runCli(['--data', dataDir, 'status', '--json'], env), runCli(['--data', dataDir, 'status', '--json'], env)]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    const whys = [why(a.stdout), why(b.stdout)];
    for (const w of whys) expect(w).toMatch(/its int8 copy \(embeddings\.precision int8/);
    // One made it; the other waited on the lock and found it (or started after it was in place).
    expect(whys.filter((w) => /made now in/.test(w))).toHaveLength(1);
    expect(readdirSync(cacheDir).sort()).toEqual(['all-MiniLM-L6-v2-int8']); // no lock, no half-made folder left
    const report = JSON.parse(readFileSync(path.join(cacheDir, 'all-MiniLM-L6-v2-int8', 'quantize-report.json'), 'utf8')) as { source: string; made_by: string };
    expect(report.source).toBe(biEncoderDir);
    expect(report.made_by).toMatch(/TypeScript/);

    const next = await runCli(['--data', dataDir, 'status', '--json'], env);
    expect(why(next.stdout)).toMatch(/its int8 copy \(embeddings\.precision int8\)/);
    expect(why(next.stdout)).toMatch(/; int8, onnx\/model_int8\.onnx$/);
  });

  it('keeps the exact model, without a copy, when embeddings.precision is fp32', async () => {
    const fp32Cache = path.join(dataDir, 'fp32-cache');
    const run = await runCli(['--data', dataDir, 'status', '--json'], { ...env, NOTARY_MODEL_CACHE_DIR: fp32Cache, NOTARY_EMBEDDING_PRECISION: 'fp32' });
    expect(run.code, run.stderr).toBe(0);
    expect(why(run.stdout)).toMatch(/fp32, onnx\/model\.onnx/);
    expect(existsSync(path.join(fp32Cache, 'all-MiniLM-L6-v2-int8'))).toBe(false);
  });
});
