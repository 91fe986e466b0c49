/**
 * Tunes the search pipeline's fusion and reflection settings on DEVELOPMENT queries kept apart from the ones the
 * harness reports: Cranfield's odd-numbered queries (the even ones are held out), and a PostgreSQL known-item sample
 * drawn with another seed from the entries the 400-query evaluation sample does not use. Builds both indexes once
 * (with vectors), then runs every variant of a grid at depths 1..3.
 *
 * Usage: npx tsx bench/tune-search.ts --reranker <bi-encoder model dir> [--variants name,name] [--pgdocs-dev N]
 *          [--out FILE]
 * Prints a table and writes JSON (default bench/results/tune-search-<date>.json).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadConfig, modelRunners } from '../core/config.js';
import { NotaryError } from '../core/errors.js';
import type { Runtime } from '../runtime/index.js';
import { LexicalReranker } from '../reranker/lexical.js';
import { OnnxReranker } from '../reranker/onnx-reranker.js';
import type { DenseRetrieval } from '../search/request-state.js';
import type { SearchPipelineOptions } from '../search/tuning.js';
import { buildCranfieldIndex, cranfieldDir, judgmentsFor, loadCranfield } from './eval/cranfield.js';
import { cachedEmbedder } from './eval/embedding-cache.js';
import { machineInfo } from './eval/harness.js';
import { DOC_SITES } from './eval/doc-sites.js';
import { buildDocSiteIndex } from './eval/pgdocs.js';
import { evalSearchConfig, evaluateRankers, pipelineRanker, type EvalQuery, type RowResult } from './eval/run.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

interface Variant {
  name: string;
  /** Without dense retrieval (BM25 first stage, the model reranks). */
  bm25Only?: boolean;
  options: SearchPipelineOptions;
}



export const VARIANTS: Variant[] = [
  { name: 'defaults', options: {} },
  { name: 'no-page', options: { pageEvidence: { weight: { lexical: 0, 'bi-encoder': 0 } } } },
  { name: 'flat-0.2', options: { pageEvidence: { weight: { lexical: 0.2, 'bi-encoder': 0.2 }, fullUpToWords: 100, noneFromWords: 101 } } },
  { name: 'flat-0.4', options: { pageEvidence: { weight: { lexical: 0.4, 'bi-encoder': 0.4 }, fullUpToWords: 100, noneFromWords: 101 } } },
  { name: 'len-0.25', options: { pageEvidence: { weight: { lexical: 0.25, 'bi-encoder': 0.25 } } } },
  { name: 'len-0.55', options: { pageEvidence: { weight: { lexical: 0.55, 'bi-encoder': 0.55 } } } },
  { name: 'len-0.4-8-20', options: { pageEvidence: { fullUpToWords: 8, noneFromWords: 20 } } },
  { name: 'len-0.4-4-8', options: { pageEvidence: { fullUpToWords: 4, noneFromWords: 8 } } },
  { name: 'len-0.4-3-10', options: { pageEvidence: { fullUpToWords: 3, noneFromWords: 10 } } },
  { name: 'no-page-pass', options: { reflection: { pagePassPages: 0 } } },
  { name: 'page-pass-20', options: { reflection: { pagePassPages: 20 } } },
];

interface SetData {
  name: 'cranfield' | 'pgdocs' | 'pydocs';
  runtime: Runtime;
  dense: DenseRetrieval | undefined;
  dev: EvalQuery[];
  keyOf: (url: string) => string;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      reranker: { type: 'string' },
      variants: { type: 'string' },
      'pgdocs-dev': { type: 'string', default: '300' },
      sets: { type: 'string' },
      depths: { type: 'string', default: '1,2,3' },
      out: { type: 'string' },
    },
    strict: true,
  });
  if (!values.reranker) throw new NotaryError('invalid_request', '--reranker <bi-encoder model dir> | lexical is required');
  const wanted = values.variants?.split(',').map((v) => v.trim());
  const variants = wanted ? VARIANTS.filter((v) => wanted.includes(v.name)) : VARIANTS.filter((v) => !v.bm25Only);
  if (wanted && variants.length !== wanted.length) throw new NotaryError('invalid_request', `unknown variant in ${values.variants}; known: ${VARIANTS.map((v) => v.name).join(', ')}`);
  const depths = values.depths.split(',').map(Number);
  const config = loadConfig();
  const log = (msg: string): void => console.error(`[tune] ${msg}`);
  const machine = machineInfo();
  const lexical = values.reranker === 'lexical';
  const model = lexical
    ? null
    : await OnnxReranker.load(path.resolve(values.reranker), {
        ...modelRunners(config.reranker),
        batchSize: config.reranker.batch_size,
        maxSeqLength: config.reranker.max_seq_length,
        source: 'tune --reranker',
      });
  if (model && model.kind !== 'bi-encoder') throw new NotaryError('invalid_request', 'tuning uses stored vectors: the model must be a bi-encoder');
  const reranker = model ?? new LexicalReranker('tune');
  const embedder = model ? await model.embedder() : null;
  const cache = embedder ? cachedEmbedder(embedder) : null;
  const denseOptions = embedder && cache ? { embedder, scoresFromVectors: true, indexEmbedder: cache } : undefined;
  const searchConfig = evalSearchConfig(config.search);
  const wantedSets = (values.sets ?? 'cranfield,pgdocs,pydocs').split(',');

  const collection = loadCranfield(cranfieldDir());
  const closers: Array<() => Promise<void>> = [];
  const sets: SetData[] = [];
  try {
    if (wantedSets.includes('cranfield')) {
      const cranfield = await buildCranfieldIndex(collection.docs, config.indexer, { ...(denseOptions ? { dense: denseOptions } : {}), log });
      closers.push(cranfield.close);
      sets.push({
        name: 'cranfield',
        runtime: cranfield.runtime,
        dense: cranfield.dense,
        // Odd-numbered queries (1st, 3rd, ...) tune; the even ones stay held out.
        dev: collection.queries
          .filter((_, i) => i % 2 === 0)
          .map((q) => ({ id: String(q.id), text: q.text, judgments: judgmentsFor(collection, q.id) })),
        keyOf: (url) => url,
      });
    }
    for (const site of DOC_SITES) {
      if (!wantedSets.includes(site.name)) continue;
      const built = await buildDocSiteIndex({ dir: site.dir, name: site.name, indexer: config.indexer, log, ...(denseOptions ? { dense: denseOptions } : {}) });
      closers.push(built.close);
      sets.push({ name: site.name, runtime: built.runtime, dense: built.dense, dev: site.devQueries(Number(values['pgdocs-dev'])), keyOf: site.key });
    }
    const results: Record<string, Record<string, Record<string, RowResult>>> = {};
    const lines: string[] = [];
    for (const variant of variants) {
      for (const set of sets) {
        const pipeline = set.runtime.searchPipeline({
          reranker,
          search: searchConfig,
          options: variant.options,
          dense: variant.bm25Only ? undefined : set.dense,
        });
        const rows = await evaluateRankers(
          set.dev,
          depths.map((d) => ({ name: `depth${d}`, ranker: pipelineRanker(pipeline, d) })),
          set.keyOf,
        );
        const perRow: Record<string, RowResult> = {};
        for (const [row, { perQuery: _perQuery, ...result }] of rows) perRow[row] = result;
        ((results[variant.name] ??= {})[set.name] = perRow);
        const metric = set.name === 'cranfield' ? 'ndcg_10' : 'mrr_10';
        const s1 = set.name === 'cranfield' ? '' : ` S@1 ${depths.map((d) => perRow[`depth${d}`]?.metrics.success_1.toFixed(3)).join('/')}`;
        const cells = depths.map((d) => {
          const r = perRow[`depth${d}`];
          return r ? `d${d} ${r.metrics[metric].toFixed(3)} (${r.latency_ms.p50.toFixed(0)} ms)` : '';
        });
        const line = `${variant.name.padEnd(16)} ${set.name.padEnd(9)} ${metric} ${cells.join('  ')}${s1}`;
        lines.push(line);
        console.log(line);
      }
    }
    const date = new Date().toISOString();
    const out = path.resolve(values.out ?? path.join(repoRoot, 'bench', 'results', `tune-search-${date.slice(0, 10)}.json`));
    mkdirSync(path.dirname(out), { recursive: true });
    writeFileSync(
      out,
      `${JSON.stringify(
        {
          generated_at: date,
          command: ['npx tsx bench/tune-search.ts', ...process.argv.slice(2)].join(' '),
          machine,
          model: reranker.info.model,
          dev_sets: Object.fromEntries(sets.map((set) => [set.name, set.name === 'cranfield' ? `odd-numbered queries (${set.dev.length})` : `${set.dev.length} entries outside the reported sample, seed 7`])),
          variants: Object.fromEntries(variants.map((v) => [v.name, { bm25_only: v.bm25Only ?? false, options: v.options }])),
          results,
        },
        null,
        2,
      )}\n`,
    );
    console.log(`\nwrote ${out}`);
  } finally {
    for (const close of closers) await close();
    await reranker.close();
    cache?.close();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof NotaryError ? `${err.code}: ${err.message}` : err);
  process.exitCode = 1;
});
