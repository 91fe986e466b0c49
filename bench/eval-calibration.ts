/**
 * Calibration of rerank_score (issue 29 item 3): fits a model's three calibration numbers on one half of the relevance
 * harness and reports, on the other half, the share of in-corpus queries whose known answer scores at or above
 * CALIBRATED_THRESHOLD and the share of out-of-corpus queries (another set's queries against this index) whose best
 * result scores below it, beside the same shares with today's uncalibrated scores.
 *
 * Splits: Cranfield's 1st, 3rd, ... queries fit (the half bench/tune-search.ts tuned on), the 2nd, 4th, ... are
 * reported; the documentation sets' development pool fits (another seed, outside the reported sample), their
 * reported sample is reported. Out-of-corpus lists follow the same split (a fit query of one set against another's index).
 *
 * Usage: npm run eval:calibration -- --model <model dir> [--passes <bi-encoder dir>] [--sets cranfield,pgdocs]
 *          [--fit-sets SETS] [--depth N] [--params FILE] [--queries N] [--write search/calibrations.json | --write FILE]
 *          [--random-ok] [--out FILE]
 * --fit-sets: the sets the fit reads (default all of --sets); the others are reported only (sites it never saw).
 * --foreign-queries SETS: these sets' queries only (no index of theirs is built), searched in every index as out-of-corpus.
 * --params FILE: no fit; the model's entry in FILE (e.g. search/calibrations.json) is measured, at --depth if given.
 * A bi-encoder is measured at depth 1 (dense retrieval with its own vectors, as served). A cross-encoder is measured at
 * search.cross_encoder_from_depth, the passes scored by --passes (a bi-encoder). --write adds or replaces the model's
 * entry in that file (search/calibrations.json ships with the product; an operator's own file is NOTARY_CALIBRATION_FILE).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadConfig, modelRunners } from '../core/config.js';
import { NotaryError } from '../core/errors.js';
import { OnnxReranker } from '../reranker/onnx-reranker.js';
import { sha256File } from '../reranker/sha256.js';
import { CALIBRATED_THRESHOLD, findCalibration, modelFolderName, readCalibrations, type CalibrationEntry, type CalibrationParameters } from '../search/calibration.js';
import { CrossEncoderStage, crossEncoderStageOptions } from '../search/cross-encoder.js';
import type { SearchPipeline } from '../search/pipeline.js';
import { fitCalibration, shares, type ScoredList } from './eval/calibration-fit.js';
import { buildCranfieldIndex, cranfieldDir, judgmentsFor, loadCranfield } from './eval/cranfield.js';
import { DOC_SITES } from './eval/doc-sites.js';
import { cachedEmbedder } from './eval/embedding-cache.js';
import { machineInfo } from './eval/harness.js';
import { buildDocSiteIndex } from './eval/pgdocs.js';
import { isRandomWeightsModel } from './eval/reranker-info.js';
import { evalSearchConfig, type EvalQuery } from './eval/run.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SETS = ['cranfield', 'pgdocs', 'pydocs'] as const;
type SetName = (typeof SETS)[number];

interface SetQueries {
  fit: EvalQuery[];
  report: EvalQuery[];
  keyOf: (url: string) => string;
}

function queriesOf(set: SetName, limit: number | undefined): SetQueries {
  if (set === 'cranfield') {
    const c = loadCranfield(cranfieldDir());
    const all = c.queries.map((q) => ({ id: String(q.id), text: q.text, judgments: judgmentsFor(c, q.id) }));
    return { fit: all.filter((_, i) => i % 2 === 0).slice(0, limit), report: all.filter((_, i) => i % 2 === 1).slice(0, limit), keyOf: (u) => u };
  }
  const site = DOC_SITES.find((s) => s.name === set);
  if (!site) throw new NotaryError('invalid_request', `unknown set ${set}`);
  return { fit: site.devQueries().slice(0, limit), report: site.queries({}).slice(0, limit), keyOf: site.key };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      model: { type: 'string' },
      passes: { type: 'string' },
      sets: { type: 'string', default: 'cranfield,pgdocs' },
      'fit-sets': { type: 'string' },
      'foreign-queries': { type: 'string' },
      depth: { type: 'string' },
      params: { type: 'string' },
      queries: { type: 'string' },
      write: { type: 'string' },
      'random-ok': { type: 'boolean', default: false },
      out: { type: 'string' },
    },
    strict: true,
  });
  if (!values.model) throw new NotaryError('invalid_request', 'name the model to calibrate: --model <model dir>');
  const sets = values.sets.split(',').map((s) => s.trim()) as SetName[];
  if (sets.length < 2 || sets.some((s) => !SETS.includes(s))) throw new NotaryError('invalid_request', `--sets takes two or more of ${SETS.join(', ')}`);
  const fitSets = values['fit-sets'] ? (values['fit-sets'].split(',').map((s) => s.trim()) as SetName[]) : sets;
  if (fitSets.length < 2 || fitSets.some((s) => !sets.includes(s))) throw new NotaryError('invalid_request', '--fit-sets takes two or more of the --sets');
  const limit = values.queries ? Number(values.queries) : undefined;
  const config = loadConfig();
  const search = evalSearchConfig(config.search);
  const log = (msg: string): void => console.error(`[calibration] ${msg}`);
  const load = (dir: string, source: string) =>
    OnnxReranker.load(path.resolve(dir), { ...modelRunners(config.reranker), batchSize: config.reranker.batch_size, maxSeqLength: config.reranker.max_seq_length, source });
  const machine = machineInfo();

  const model = await load(values.model, 'eval:calibration --model');
  const passes = model.kind === 'bi-encoder' ? model : await load(values.passes ?? '', 'eval:calibration --passes');
  if (passes.kind !== 'bi-encoder') throw new NotaryError('invalid_request', 'a cross-encoder is calibrated over bi-encoder passes: --passes <bi-encoder dir>');
  const sha = await sha256File(model.onnxPath);
  const random = isRandomWeightsModel(model.onnxPath, sha);
  if (random && !values['random-ok']) {
    throw new NotaryError('invalid_request', `${model.onnxPath} has RANDOM weights: a calibration of noise means nothing (--random-ok runs it to test the command)`);
  }
  const depth = values.depth ? Number(values.depth) : model.kind === 'cross-encoder' ? search.cross_encoder_from_depth : 1;
  if (!Number.isInteger(depth) || depth < 1 || depth > search.max_depth) throw new NotaryError('invalid_request', `--depth takes 1..${search.max_depth}`);
  const given = values.params ? findCalibration(readCalibrations(path.resolve(values.params)), { kind: model.kind, onnxSha256: sha, name: modelFolderName(model.onnxPath) }) : null;
  if (values.params && !given) throw new NotaryError('invalid_request', `${values.params} has no calibration of ${model.onnxPath}`);
  const embedder = await passes.embedder();
  const cache = cachedEmbedder(embedder);
  const dense = { embedder, scoresFromVectors: true, indexEmbedder: cache };
  const lists: Array<ScoredList & { split: 'fit' | 'report' }> = [];
  const foreign = values['foreign-queries'] ? (values['foreign-queries'].split(',').map((s) => s.trim()) as SetName[]) : [];
  if (foreign.some((s) => !SETS.includes(s) || sets.includes(s))) throw new NotaryError('invalid_request', `--foreign-queries takes sets of ${SETS.join(', ')} not in --sets`);
  const queries = new Map([...sets, ...foreign].map((s) => [s, queriesOf(s, limit)]));
  try {
    for (const indexSet of sets) {
      const built =
        indexSet === 'cranfield'
          ? await buildCranfieldIndex(loadCranfield(cranfieldDir()).docs, config.indexer, { dense, log })
          : await (async () => {
              const site = DOC_SITES.find((s) => s.name === indexSet);
              if (!site) throw new NotaryError('invalid_request', `unknown set ${indexSet}`);
              return buildDocSiteIndex({ dir: site.dir, name: site.name, indexer: config.indexer, log, dense });
            })();
      try {
        const crossEncoder = model.kind === 'cross-encoder' ? new CrossEncoderStage(model, crossEncoderStageOptions(search)) : undefined;
        const pipeline: SearchPipeline = built.runtime.searchPipeline({ reranker: passes, search, ...(built.dense ? { dense: built.dense } : {}), ...(crossEncoder ? { crossEncoder } : {}) });
        for (const querySet of [...sets, ...foreign]) {
          const q = queries.get(querySet) as SetQueries;
          for (const split of ['fit', 'report'] as const) {
            for (const query of q[split]) {
              const outcome = await pipeline.search({ query: query.text, depth });
              const scoring = outcome.scoring;
              if (!scoring) throw new NotaryError('internal_error', 'the pipeline gave no scoring');
              const answerAt = querySet === indexSet ? outcome.results.findIndex((r) => (query.judgments.get(q.keyOf(r.url)) ?? 0) > 0) : -1;
              lists.push({ set: querySet, index: indexSet, query: query.text, fused: scoring.fused, evidence: scoring.evidence, answerAt, split });
            }
            log(`${querySet} ${split} queries against the ${indexSet} index: done`);
          }
        }
      } finally {
        await built.close();
      }
    }
  } finally {
    cache.close();
    await model.close();
    if (passes !== model) await passes.close();
  }

  const fitted = lists.filter((l) => l.split === 'fit' && fitSets.includes(l.set as SetName) && fitSets.includes(l.index as SetName));
  const params: CalibrationParameters =
    given?.parameters ?? fitCalibration(fitted.filter((l) => l.set === l.index), fitted.filter((l) => l.set !== l.index));
  log(`${given ? 'measured' : 'fitted'}: ${JSON.stringify(params)}`);
  const groups: Record<string, unknown> = {};
  for (const split of ['fit', 'report'] as const) {
    for (const l of [...sets, ...foreign]) {
      for (const i of sets) {
        const group = lists.filter((x) => x.split === split && x.set === l && x.index === i);
        const inCorpus = l === i;
        const seen = !given && split === 'fit' && fitSets.includes(l) && fitSets.includes(i);
        groups[`${split}: ${l} queries -> ${i} index`] = {
          kind: inCorpus ? 'in-corpus' : 'out-of-corpus',
          read_by_the_fit: seen,
          calibrated: shares(group, params, inCorpus),
          uncalibrated: shares(group, null, inCorpus),
        };
      }
    }
  }
  const now = new Date();
  const command = ['npm run eval:calibration --', ...process.argv.slice(2)].join(' ');
  const entry: CalibrationEntry = {
    model: modelFolderName(model.onnxPath),
    kind: model.kind,
    onnx_sha256: sha,
    parameters: params,
    fitted: { date: now.toISOString().slice(0, 10), command, depth, sets: fitSets, fit_split: FIT_SPLIT, threshold: CALIBRATED_THRESHOLD, random_weights: random },
  };
  const report = {
    date: now.toISOString().slice(0, 10),
    generated_at: now.toISOString(),
    command,
    machine: { ...machine, load_average_at_end: machineInfo().load_average_at_start },
    model: { name: entry.model, kind: model.kind, onnx_path: model.onnxPath, onnx_sha256: sha, random_weights: random },
    passes: passes === model ? null : { onnx_path: passes.onnxPath },
    depth,
    threshold: CALIBRATED_THRESHOLD,
    fit_split: FIT_SPLIT,
    fit_sets: given ? null : fitSets,
    parameters_from: given ? path.resolve(values.params ?? '') : 'fitted by this run',
    parameters: params,
    results: groups,
    /** Every list, compactly: the best result's evidence and the fused gap down to the known answer (null: not in the list). */
    lists: lists.map((l) => ({
      split: l.split,
      set: l.set,
      index: l.index,
      model: l.evidence?.model ?? null,
      coverage: l.evidence?.coverage ?? null,
      answer_gap: l.answerAt >= 0 ? Math.max(...l.fused) - (l.fused[l.answerAt] as number) : null,
      answer_at: l.answerAt,
    })),
  };
  const out = path.resolve(values.out ?? path.join(repoRoot, 'bench', 'results', `eval-calibration-${report.date}-${entry.model}.json`));
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
  for (const [name, g] of Object.entries(groups)) console.log(`${name}: ${JSON.stringify(g)}`);
  console.log(`wrote ${out}`);
  if (values.write && !given) writeEntry(path.resolve(values.write), entry);
}

const FIT_SPLIT =
  "fit: Cranfield's 1st, 3rd, ... queries and the documentation sets' development pools (doc-sites.ts devQueries); " +
  "report: Cranfield's 2nd, 4th, ... and the documentation sets' reported samples; out-of-corpus lists split alike";

/** Adds or replaces `entry` (same .onnx sha256) in a calibrations file, creating it when absent. */
function writeEntry(file: string, entry: CalibrationEntry): void {
  const current = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { calibrations: CalibrationEntry[] }) : { calibrations: [] };
  const calibrations = [...current.calibrations.filter((e) => e.onnx_sha256 !== entry.onnx_sha256), entry];
  writeFileSync(file, `${JSON.stringify({ calibrations }, null, 2)}\n`);
  console.log(`calibration of ${entry.model} written to ${file}`);
}

main().catch((err: unknown) => {
  console.error(err instanceof NotaryError ? `${err.code}: ${err.message}` : err instanceof Error ? `calibration failed: ${err.message}` : err);
  process.exitCode = 1;
});
