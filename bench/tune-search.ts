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
import { loadConfig } from '../core/config.js';
import { NotaryError } from '../core/errors.js';
import type { SearchIndex } from '../indexer/search-index.js';
import { OnnxReranker } from '../reranker/onnx-reranker.js';
import { SearchPipeline, type DenseRetrieval, type SearchPipelineOptions } from '../search/pipeline.js';
import { knownItemQueries, pgDocsDir, sample } from '../test/support/pgdocs.js';
import { buildCranfieldIndex, cranfieldDir, judgmentsFor, loadCranfield } from './eval/cranfield.js';
import { cachedEmbedder } from './eval/embedding-cache.js';
import { machineInfo } from './eval/harness.js';
import { buildPgDocsIndex, DEFAULT_PGDOCS_QUERIES, pgDocsKey, pgDocsQueries } from './eval/pgdocs.js';
import { evalSearchConfig, evaluateRankers, pipelineRanker, type EvalQuery, type RowResult } from './eval/run.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

interface Variant {
  name: string;
  /** Without dense retrieval (BM25 first stage, the model reranks). */
  bm25Only?: boolean;
  options: SearchPipelineOptions;
}

const reflection = (r: NonNullable<SearchPipelineOptions['reflection']>): SearchPipelineOptions['reflection'] => r;

export const VARIANTS: Variant[] = [
  // Slow: the model runs on every candidate (about 1 s a query on 2 cores).
  { name: 'bm25-first', bm25Only: true, options: {} },
  { name: 'rrf', options: { hybridEvidence: 'rrf', reflection: reflection({ feedbackPassages: 10, feedbackScoreWeight: 0 }) } },
  { name: 'rrf-lexev', options: { hybridEvidence: 'lexical', reflection: reflection({ feedbackPassages: 10, feedbackScoreWeight: 0 }) } },
  { name: 'rrf-lexev-w3', options: { hybridEvidence: 'lexical', retrievalWeight: { 'bi-encoder': 0.3 }, reflection: reflection({ feedbackPassages: 10, feedbackScoreWeight: 0 }) } },
  { name: 'rrf-lexev-w4', options: { hybridEvidence: 'lexical', retrievalWeight: { 'bi-encoder': 0.4 }, reflection: reflection({ feedbackPassages: 10, feedbackScoreWeight: 0 }) } },
  { name: 'defaults', options: {} },
  { name: 'lexev-fb3-fp3', options: { hybridEvidence: 'lexical', reflection: reflection({ feedbackScoreWeight: 0.3, feedbackPassages: 3 }) } },
  { name: 'lexev-fb0-fp3', options: { hybridEvidence: 'lexical', reflection: reflection({ feedbackPassages: 3 }) } },
  { name: 'lexev-fb5-fp3', options: { hybridEvidence: 'lexical', reflection: reflection({ feedbackScoreWeight: 0.5, feedbackPassages: 3 }) } },
  { name: 'lexev-fb3-fp2', options: { hybridEvidence: 'lexical', reflection: reflection({ feedbackScoreWeight: 0.3, feedbackPassages: 2 }) } },
  { name: 'lexev-fb3-fp1', options: { hybridEvidence: 'lexical', reflection: reflection({ feedbackScoreWeight: 0.3, feedbackPassages: 1 }) } },
  { name: 'lexev-w3-fb3-fp3', options: { hybridEvidence: 'lexical', retrievalWeight: { 'bi-encoder': 0.3 }, reflection: reflection({ feedbackScoreWeight: 0.3, feedbackPassages: 3 }) } },
  { name: 'lexev-fb3-fp3-win60', options: { hybridEvidence: 'lexical', reflection: reflection({ feedbackScoreWeight: 0.3, feedbackPassages: 3, window: 60, candidatesPerPass: 60 }) } },
  { name: 'lexev-win60', options: { hybridEvidence: 'lexical', reflection: reflection({ feedbackPassages: 10, feedbackScoreWeight: 0, window: 60, candidatesPerPass: 60 }) } },
];

interface SetData {
  name: 'cranfield' | 'pgdocs';
  index: SearchIndex;
  dense: DenseRetrieval;
  dev: EvalQuery[];
  keyOf: (url: string) => string;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      reranker: { type: 'string' },
      variants: { type: 'string' },
      'pgdocs-dev': { type: 'string', default: '300' },
      depths: { type: 'string', default: '1,2,3' },
      out: { type: 'string' },
    },
    strict: true,
  });
  if (!values.reranker) throw new NotaryError('invalid_request', '--reranker <bi-encoder model dir> is required');
  const wanted = values.variants?.split(',').map((v) => v.trim());
  const variants = wanted ? VARIANTS.filter((v) => wanted.includes(v.name)) : VARIANTS.filter((v) => !v.bm25Only);
  if (wanted && variants.length !== wanted.length) throw new NotaryError('invalid_request', `unknown variant in ${values.variants}; known: ${VARIANTS.map((v) => v.name).join(', ')}`);
  const depths = values.depths.split(',').map(Number);
  const config = loadConfig();
  const log = (msg: string): void => console.error(`[tune] ${msg}`);
  const machine = machineInfo();
  const model = await OnnxReranker.load(path.resolve(values.reranker), {
    threads: config.reranker.threads,
    batchSize: config.reranker.batch_size,
    maxSeqLength: config.reranker.max_seq_length,
    source: 'tune --reranker',
  });
  if (model.kind !== 'bi-encoder') throw new NotaryError('invalid_request', 'tuning uses stored vectors: the model must be a bi-encoder');
  const embedder = await model.embedder();
  const cache = cachedEmbedder(embedder);
  const denseOptions = { embedder, scoresFromVectors: true, indexEmbedder: cache };
  const searchConfig = evalSearchConfig(config.search);

  const collection = loadCranfield(cranfieldDir());
  const cranfield = await buildCranfieldIndex(collection.docs, config.indexer, { dense: denseOptions, log });
  const pgdocs = await buildPgDocsIndex({ dir: pgDocsDir, indexer: config.indexer, log, dense: denseOptions });
  try {
    const reported = new Set(pgDocsQueries(pgDocsDir, DEFAULT_PGDOCS_QUERIES).map((q) => q.text));
    const devPool = knownItemQueries(pgDocsDir).filter((q) => !reported.has(q.query));
    const sets: SetData[] = [
      {
        name: 'cranfield',
        index: cranfield.index,
        dense: cranfield.dense as DenseRetrieval,
        // Odd-numbered queries (1st, 3rd, ...) tune; the even ones stay held out.
        dev: collection.queries
          .filter((_, i) => i % 2 === 0)
          .map((q) => ({ id: String(q.id), text: q.text, judgments: judgmentsFor(collection, q.id) })),
        keyOf: (url) => url,
      },
      {
        name: 'pgdocs',
        index: pgdocs.index,
        dense: pgdocs.dense as DenseRetrieval,
        dev: sample(devPool, Number(values['pgdocs-dev']), 7).map((q, i) => ({ id: `dev${i + 1}`, text: q.query, judgments: new Map(q.targets.map((t) => [t, 1])) })),
        keyOf: pgDocsKey,
      },
    ];
    const results: Record<string, Record<string, Record<string, RowResult>>> = {};
    const lines: string[] = [];
    for (const variant of variants) {
      for (const set of sets) {
        const pipeline = new SearchPipeline({
          index: set.index,
          reranker: model,
          config: searchConfig,
          options: variant.options,
          ...(variant.bm25Only ? {} : { dense: set.dense }),
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
        const cells = depths.map((d) => {
          const r = perRow[`depth${d}`];
          return r ? `d${d} ${r.metrics[metric].toFixed(3)} (${r.latency_ms.p50.toFixed(0)} ms)` : '';
        });
        const line = `${variant.name.padEnd(16)} ${set.name.padEnd(9)} ${metric} ${cells.join('  ')}`;
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
          model: denseOptions.embedder.model,
          dev_sets: { cranfield: `odd-numbered queries (${sets[0]?.dev.length})`, pgdocs: `${sets[1]?.dev.length} entries outside the reported sample, seed 7` },
          variants: Object.fromEntries(variants.map((v) => [v.name, { bm25_only: v.bm25Only ?? false, options: v.options }])),
          results,
        },
        null,
        2,
      )}\n`,
    );
    console.log(`\nwrote ${out}`);
  } finally {
    await cranfield.close();
    await pgdocs.close();
    await model.close();
    cache.close();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof NotaryError ? `${err.code}: ${err.message}` : err);
  process.exitCode = 1;
});
