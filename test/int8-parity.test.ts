import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCranfield } from '../bench/eval/cranfield.js';
import { makeInt8Copy, OnnxReranker } from '../reranker/index.js';
import { biEncoderDir } from '../testkit/models.js';
import { repoRoot } from '../testkit/cli.js';

/**
 * The int8 copy notary makes in TypeScript (reranker/quantize-int8.ts) against the one onnxruntime's Python
 * quantize_dynamic(QInt8, per_channel=True) makes (scripts/quantize-minilm.sh, what every published benchmark used):
 * the same vectors, bit for bit, for 250 real texts (Cranfield abstracts and queries), and close to fp32.
 * The Python copy: NOTARY_INT8_REFERENCE, else ~/.cache/notary/models/all-MiniLM-L6-v2-int8, else made here with
 * scripts/quantize-minilm.sh when its venv is already there (seconds) or under CI=true (the script makes the venv);
 * without any, only the fp32 bound is checked, and CI fails. The CPU a query of each copy is a benchmark
 * (bench/query-embedding-cpu.ts), not a test.
 */

const work = mkdtempSync(path.join(tmpdir(), 'notary-int8-parity-'));
const venv = process.env['NOTARY_QUANTIZE_VENV'] ?? path.join(homedir(), '.cache/notary/quantize-venv');

function pythonCopy(): string | undefined {
  const named = process.env['NOTARY_INT8_REFERENCE'];
  if (named) return named;
  const usual = path.join(homedir(), '.cache/notary/models/all-MiniLM-L6-v2-int8');
  if (existsSync(path.join(usual, 'onnx', 'model_int8.onnx'))) return usual;
  // Under CI the venv is made (pip, about 60 MB): the bitwise comparison is the point of this suite.
  if (!existsSync(path.join(venv, 'bin', 'python')) && process.env['CI'] !== 'true') return undefined;
  const out = path.join(work, 'python-int8');
  execFileSync('bash', [path.join(repoRoot, 'scripts/quantize-minilm.sh'), '--src', biEncoderDir, '--out', out], { stdio: 'ignore', timeout: 300_000 });
  return out;
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += (a[i] ?? 0) * (b[i] ?? 0);
    na += (a[i] ?? 0) ** 2;
    nb += (b[i] ?? 0) ** 2;
  }
  return dot / Math.sqrt(na * nb);
}

function compare(a: Float32Array[], b: Float32Array[]): { identical: number; maxAbs: number; minCos: number } {
  let identical = 0;
  let maxAbs = 0;
  let minCos = 1;
  a.forEach((va, i) => {
    const vb = b[i] as Float32Array;
    if (Buffer.from(va.buffer, va.byteOffset, va.byteLength).equals(Buffer.from(vb.buffer, vb.byteOffset, vb.byteLength))) identical++;
    for (let j = 0; j < va.length; j++) maxAbs = Math.max(maxAbs, Math.abs((va[j] ?? 0) - (vb[j] ?? 0)));
    minCos = Math.min(minCos, cosine(va, vb));
  });
  return { identical, maxAbs, minCos };
}

const load = (dir: string, onnxFile: string): Promise<OnnxReranker> =>
  OnnxReranker.load(dir, { threads: 1, batchSize: 1, maxSeqLength: 256, source: 'config', onnxFile });

let texts: string[] = [];
let queries: string[] = [];
let tsCopy: { dir: string; onnxFile: string };
let reference: string | undefined;

beforeAll(async () => {
  const cranfield = loadCranfield();
  queries = cranfield.queries.slice(0, 100).map((q) => q.text);
  texts = [...cranfield.docs.slice(0, 150).map((d) => `${d.title}. ${d.abstract}`), ...queries];
  tsCopy = await makeInt8Copy(biEncoderDir, path.join(work, 'cache'), { log: () => {} });
  reference = pythonCopy();
}, 600_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the int8 copy made in TypeScript', () => {
  it('is the folder the Python script writes, with a report naming the method and the source sha256', () => {
    expect(tsCopy.dir).toBe(path.join(work, 'cache', 'all-MiniLM-L6-v2-int8'));
    const report = JSON.parse(readFileSync(path.join(tsCopy.dir, 'quantize-report.json'), 'utf8')) as Record<string, unknown>;
    expect(report['method']).toMatch(/quantize_dynamic\(weight_type=QInt8, per_channel=True/);
    expect(report['source_onnx_sha256']).toMatch(/^[0-9a-f]{64}$/);
    expect(Object.keys(report['files'] as object)).toEqual(expect.arrayContaining(['onnx/model_int8.onnx', 'tokenizer.json', 'config.json']));
  });

  it('embeds 250 real texts exactly as the Python-made copy does, and within 0.97 cosine of fp32', async () => {
    const ours = await load(tsCopy.dir, tsCopy.onnxFile);
    const fp32 = await load(biEncoderDir, 'onnx/model.onnx');
    try {
      const mine = await ours.embed(texts);
      const exact = await fp32.embed(texts);
      const toFp32 = compare(mine, exact);
      console.log(`TS int8 vs fp32 over ${texts.length} texts: min cosine ${toFp32.minCos.toFixed(6)}, max |diff| ${toFp32.maxAbs.toExponential(2)}`);
      expect(toFp32.minCos).toBeGreaterThan(0.97);
      if (!reference) {
        if (process.env['CI'] === 'true') throw new Error('CI=true and no Python-made int8 copy: set NOTARY_INT8_REFERENCE or let scripts/quantize-minilm.sh make its venv');
        console.log('no Python-made int8 copy here (and no quantize venv to make one): only the fp32 bound was checked');
        return;
      }
      const python = await load(reference, 'onnx/model_int8.onnx');
      try {
        const theirs = await python.embed(texts);
        const toPython = compare(mine, theirs);
        console.log(
          `TS int8 vs Python int8 (${reference}): ${toPython.identical}/${texts.length} vectors bitwise identical, ` +
            `max |diff| ${toPython.maxAbs.toExponential(2)}, min cosine ${toPython.minCos.toFixed(8)}; Python int8 vs fp32 min cosine ${compare(theirs, exact).minCos.toFixed(6)}`,
        );
        expect(toPython.identical).toBe(texts.length);
      } finally {
        await python.close();
      }
    } finally {
      await ours.close();
      await fp32.close();
    }
  });
});
