import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OnnxReranker } from '../reranker/onnx-reranker.js';
import { crossEncoderDir, type ReferenceLogits } from '../testkit/models.js';
import { BertPairTokenizer } from '../reranker/tokenizer.js';
import { repoRoot } from '../testkit/cli.js';

/**
 * Parity with the Python reference pipeline (Hugging Face tokenizers + onnxruntime), recomputed on this machine.
 * reference_logits.json was computed on another CPU: its int8 logits differ from what onnxruntime gives here by up
 * to 2.6e-3 in Python as in Node, so the file's tolerance (1e-4) is applied against the same pipeline run here.
 * scripts/test.sh creates the reference venv (scripts/reference-venv.sh); NOTARY_REFERENCE_PYTHON points elsewhere.
 */
const reference = JSON.parse(readFileSync(path.join(crossEncoderDir, 'reference_logits.json'), 'utf8')) as ReferenceLogits;
const python =
  process.env['NOTARY_REFERENCE_PYTHON'] ??
  path.join(process.env['XDG_CACHE_HOME'] ?? path.join(homedir(), '.cache'), 'notary/reference-venv/bin/python');

const longPassage = Array.from({ length: 120 }, (_, i) => `Sentence ${i} explains how VACUUM reclaims dead tuples, and why autovacuum matters.`).join(' ');
const pairs: Array<[string, string]> = [
  ...reference.cases.map((c): [string, string] => [c.query, c.passage]),
  ['how do i rebuild an index', longPassage],
  [`${'why is my query slow '.repeat(40)}`, longPassage],
  ['Café naïve Ünïcödé façade', 'Crème brûlée, jalapeño and smörgåsbord: Zürich straße ÅÄÖ résumé.'],
  ['東京 population', '東京都の人口は約1400万人です。Tokyo has about 14 million residents.'],
  ['e-mail: a.b@c.d?!', 'C++ vs. C#; 3.14159 -- "quoted" (parenthesised) [bracketed] {braced} 1,000,000 $5 50% #tag'],
  ['x', ' '],
];

interface ReferenceRun {
  onnxruntime: string;
  cases: Array<{ input_ids: number[]; token_type_ids: number[]; logit: number }>;
}

let run: ReferenceRun;
let reranker: OnnxReranker;
let tokenizer: BertPairTokenizer;

beforeAll(async () => {
  if (!existsSync(python)) {
    throw new Error(`no reference python at ${python}: run scripts/reference-venv.sh (scripts/test.sh does) or set NOTARY_REFERENCE_PYTHON`);
  }
  const res = spawnSync(python, [path.join(repoRoot, 'scripts/reranker-reference.py')], {
    input: JSON.stringify({ model_dir: crossEncoderDir, onnx: reference.model, max_length: reference.max_length, pairs }),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (res.status !== 0) throw new Error(`reference pipeline failed: ${res.stderr}`);
  run = JSON.parse(res.stdout) as ReferenceRun;
  reranker = await OnnxReranker.load(crossEncoderDir, { threads: 2, batchSize: 16, maxSeqLength: reference.max_length, source: 'config', onnxFile: reference.model });
  tokenizer = BertPairTokenizer.fromDir(crossEncoderDir);
}, 120_000);

afterAll(async () => reranker?.close());

describe('cross-encoder parity with the Python reference pipeline on this machine', () => {
  it('the reference pipeline reproduces the ids of reference_logits.json', () => {
    reference.cases.forEach((c, i) => {
      expect(run.cases[i]?.input_ids).toEqual(c.input_ids);
      expect(run.cases[i]?.token_type_ids).toEqual(c.token_type_ids);
    });
    const drift = Math.max(...reference.cases.map((c, i) => Math.abs((run.cases[i]?.logit ?? NaN) - c.logit)));
    console.log(`onnxruntime ${run.onnxruntime} here vs reference_logits.json: max logit difference ${drift.toExponential(2)}`);
  });

  it('token ids and token type ids are identical for every pair (truncation, unicode, punctuation included)', () => {
    pairs.forEach(([query, passage], i) => {
      const ours = tokenizer.encodePair(query, passage, reference.max_length);
      expect(ours.inputIds, `pair ${i}`).toEqual(run.cases[i]?.input_ids);
      expect(ours.tokenTypeIds, `pair ${i}`).toEqual(run.cases[i]?.token_type_ids);
    });
  });

  it(`logits agree within the reference tolerance (${reference.tolerance})`, async () => {
    for (const [i, [query, passage]] of pairs.entries()) {
      const [score] = await reranker.score(query, [passage]);
      const logit = Math.log(score! / (1 - score!));
      expect(Math.abs(logit - run.cases[i]!.logit), `pair ${i}: ${logit} vs ${run.cases[i]!.logit}`).toBeLessThanOrEqual(reference.tolerance);
    }
  });
});
