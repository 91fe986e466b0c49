/**
 * Relevance harness (issues 4, 11): Cranfield 1400 and two documentation known-item sets (PostgreSQL, Python), rows BM25
 * alone (passages), page-level BM25 (the reference for lookups) and depth 1..3
 * through the search pipeline, metrics and latency per row.
 *
 * Usage: npx tsx bench/eval-search.ts [--sets cranfield,pgdocs,pydocs] [--rows bm25,page_bm25,hybrid,depth1,depth2,depth3]
 *          [--reranker lexical|auto|<model dir or .onnx>] [--dense | --embedder <bi-encoder model dir>] [--embedding-cache]
 *          [--cranfield-queries N] [--cranfield-held-out] [--pgdocs-queries N] [--pydocs-queries N] [--out FILE]
 *          [--backend sqlite-fts5|postgres|meilisearch] (the passage index: NOTARY_DATABASE_URL / NOTARY_MEILISEARCH_URL)
 * Without --reranker the configured model (NOTARY_RERANKER_MODEL / reranker.model_dir) is used, else the lexical
 * fallback. --dense embeds every passage with the reranker's own bi-encoder (--embedder: another bi-encoder) and
 * the depth rows then retrieve with BM25 + dense vectors fused by RRF; --embedding-cache keeps passage vectors between
 * runs (bench/eval/embedding-cache.ts; queries are always embedded afresh). Writes bench/results/eval-search-<date>.json
 * unless --out says otherwise.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadConfig, modelRunners } from '../core/config.js';
import { NotaryError } from '../core/errors.js';
import { OnnxReranker } from '../reranker/onnx-reranker.js';
import type { EvalDenseOptions } from './eval/dense.js';
import { cachedEmbedder, evalCacheDir } from './eval/embedding-cache.js';
import { formatComparisons, formatTable, parseRows, parseSets, runSearchEval } from './eval/harness.js';
import { describeReranker, loadEvalReranker } from './eval/reranker-info.js';

const USAGE = `Usage: npm run eval:search -- [--sets cranfield,pgdocs,pydocs] [--rows bm25,page_bm25,hybrid,depth1,depth2,depth3]
    [--reranker lexical|auto|<model dir or .onnx>] [--dense | --embedder <bi-encoder model dir>] [--embedding-cache]
    [--cross-encoder <model dir>] [--cross-encoder-random-ok]
    [--cranfield-queries N] [--cranfield-held-out] [--pgdocs-queries N] [--pydocs-queries N] [--page-weight W] [--out FILE]
    [--backend sqlite-fts5|postgres|meilisearch]  (postgres: a database per set on NOTARY_DATABASE_URL's server;
                                                   meilisearch: an index per set on NOTARY_MEILISEARCH_URL)`;

const INDEX_BACKENDS = ['sqlite-fts5', 'postgres', 'meilisearch'] as const;

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function positiveInt(raw: string | undefined, name: string): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new NotaryError('invalid_request', `--${name} must be a positive integer, got "${raw}"`);
  return n;
}

const RANDOM_WEIGHTS_BANNER = [
  '!'.repeat(100),
  '!!! THE ACTIVE RERANKER HAS RANDOM WEIGHTS (model_random_weights_int8.onnx). Its scores are noise: the depth rows',
  '!!! below measure NOTHING about relevance, only latency. Do not quote their quality numbers.',
  '!'.repeat(100),
].join('\n');

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      sets: { type: 'string' },
      rows: { type: 'string' },
      reranker: { type: 'string' },
      dense: { type: 'boolean', default: false },
      embedder: { type: 'string' },
      'embedding-cache': { type: 'boolean', default: false },
      'cross-encoder': { type: 'string' },
      'cross-encoder-random-ok': { type: 'boolean', default: false },
      'cranfield-queries': { type: 'string' },
      'cranfield-held-out': { type: 'boolean', default: false },
      'pgdocs-queries': { type: 'string' },
      'pydocs-queries': { type: 'string' },
      'page-weight': { type: 'string' },
      backend: { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const sets = parseSets(values.sets);
  const denseAsked = values.dense === true || values.embedder !== undefined;
  // The hybrid row needs vectors: by default it is run only when dense retrieval is on.
  let rows = parseRows(values.rows).filter((row) => values.rows !== undefined || denseAsked || row !== 'hybrid');
  // The cross-encoder row runs only with a cross-encoder named (--cross-encoder DIR).
  if (!values['cross-encoder']) {
    if (values.rows !== undefined && rows.includes('depth2_cross')) throw new NotaryError('invalid_request', 'the depth2_cross row needs --cross-encoder <model dir>');
    rows = rows.filter((row) => row !== 'depth2_cross');
  }
  const loaded = loadConfig();
  const asked = values.backend ?? loaded.indexer.backend;
  const backend = INDEX_BACKENDS.find((b) => b === asked);
  if (!backend) throw new NotaryError('invalid_request', `--backend takes ${INDEX_BACKENDS.join(', ')}; got "${asked}"`);
  // The sets' passages go into this backend (bench/eval/eval-runtime.ts gives each set a database or index of its own).
  const config = { ...loaded, indexer: { ...loaded.indexer, backend } };
  const log = (msg: string): void => console.error(`[eval] ${msg}`);

  const { reranker, chosenBy } = await loadEvalReranker(config.reranker, values.reranker, (level, msg) => log(`${level}: ${msg}`));
  const warnings: string[] = [];
  let embedderModel: OnnxReranker | undefined;
  let crossModel: OnnxReranker | undefined;
  let embeddingCache: ReturnType<typeof cachedEmbedder> | undefined;
  try {
    const rerankerInfo = await describeReranker(reranker, chosenBy);
    log(`reranker: ${rerankerInfo.kind} ${rerankerInfo.model} (source ${rerankerInfo.source}); chosen by ${chosenBy}`);
    if (rerankerInfo.kind === 'lexical') {
      warnings.push('depth rows use the LEXICAL fallback reranker (no neural model): term overlap only.');
    }
    if (rerankerInfo.random_weights) {
      warnings.push('the reranker is the RANDOM-WEIGHT ONNX model: depth-row relevance numbers are meaningless; latency only.');
      console.error(RANDOM_WEIGHTS_BANNER);
    }
    let dense: EvalDenseOptions | undefined;
    if (values.embedder) {
      embedderModel = await OnnxReranker.load(path.resolve(values.embedder), {
        ...modelRunners(config.reranker),
        batchSize: config.reranker.batch_size,
        maxSeqLength: config.reranker.max_seq_length,
        source: 'eval --embedder',
      });
      const embedder = await embedderModel.embedder();
      embeddingCache = values['embedding-cache'] ? cachedEmbedder(embedder) : undefined;
      dense = { embedder, scoresFromVectors: false, ...(embeddingCache ? { indexEmbedder: embeddingCache } : {}) };
    } else if (values.dense) {
      if (!(reranker instanceof OnnxReranker) || reranker.kind !== 'bi-encoder') {
        throw new NotaryError('invalid_request', `--dense embeds with the reranker's own model, which must be a bi-encoder (it is ${reranker.info.kind}); use --embedder DIR`);
      }
      const embedder = await reranker.embedder();
      embeddingCache = values['embedding-cache'] ? cachedEmbedder(embedder) : undefined;
      dense = { embedder, scoresFromVectors: true, ...(embeddingCache ? { indexEmbedder: embeddingCache } : {}) };
    }
    if (dense) log(`dense retrieval: ${dense.embedder.model} (${dense.embedder.dimensions} dimensions)`);
    let crossInfo: Awaited<ReturnType<typeof describeReranker>> | undefined;
    if (values['cross-encoder'] && rows.includes('depth2_cross')) {
      crossModel = await OnnxReranker.load(path.resolve(values['cross-encoder']), {
        ...modelRunners(config.reranker),
        batchSize: config.reranker.batch_size,
        maxSeqLength: config.reranker.max_seq_length,
        source: 'eval --cross-encoder',
      });
      if (crossModel.kind !== 'cross-encoder') throw new NotaryError('invalid_request', `--cross-encoder ${values['cross-encoder']} is a ${crossModel.kind}; name a cross-encoder`);
      crossInfo = await describeReranker(crossModel, '--cross-encoder');
      if (crossInfo.random_weights && !values['cross-encoder-random-ok']) {
        // Random weights: its scores are noise, so the row would measure nothing about relevance.
        warnings.push(`the depth2_cross row was NOT run: ${crossInfo.onnx_path ?? values['cross-encoder']} has RANDOM weights (--cross-encoder-random-ok runs it for latency only)`);
        rows = rows.filter((row) => row !== 'depth2_cross');
        crossInfo = undefined;
      } else if (crossInfo.random_weights) {
        warnings.push('the depth2_cross row ran with a RANDOM-WEIGHT cross-encoder: its relevance numbers are meaningless; latency only.');
      }
      if (crossInfo) log(`cross-encoder: ${crossInfo.model} (depth2_cross row, from search.cross_encoder_from_depth ${config.search.cross_encoder_from_depth})`);
    }
    if (embeddingCache) warnings.push(`passage embeddings came from the eval cache where present (${evalCacheDir()}): embed_ms is not embedding speed`);
    log(`index backend: ${backend}`);
    const report = await runSearchEval({
      indexBackend: backend,
      ...(dense ? { dense } : {}),
      config,
      reranker,
      rerankerInfo,
      ...(crossInfo && crossModel ? { crossEncoder: crossModel, crossEncoderInfo: crossInfo } : {}),
      sets,
      rows,
      cranfieldQueries: positiveInt(values['cranfield-queries'], 'cranfield-queries'),
      cranfieldHeldOut: values['cranfield-held-out'],
      pgdocsQueries: positiveInt(values['pgdocs-queries'], 'pgdocs-queries'),
      pydocsQueries: positiveInt(values['pydocs-queries'], 'pydocs-queries'),
      ...(values['page-weight'] !== undefined
        ? { pipelineOptions: { pageEvidence: { weight: { lexical: Number(values['page-weight']), 'bi-encoder': Number(values['page-weight']), 'cross-encoder': Number(values['page-weight']) } } } }
        : {}),
      command: ['npx tsx bench/eval-search.ts', ...process.argv.slice(2)].join(' '),
      warnings,
      log,
    });
    // A random-weight run gets its own default file so it never replaces a meaningful one.
    const suffix = rerankerInfo.random_weights ? '-random-weights' : '';
    const out = path.resolve(values.out ?? path.join(repoRoot, 'bench', 'results', `eval-search-${report.date}${suffix}.json`));
    mkdirSync(path.dirname(out), { recursive: true });
    writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);

    console.log(`\nRelevance eval ${report.generated_at} on ${report.machine.cpu} (${report.machine.cores} cores), node ${report.machine.node}`);
    console.log(`Reranker: ${rerankerInfo.kind} ${rerankerInfo.model} [${rerankerInfo.source}], ${chosenBy}`);
    console.log(`First stage: ${report.retrieval}`);
    console.log(`rerank_top_n ${report.settings.rerank_top_n}, max_results ${report.settings.max_results}; depth N = depth 1 plus N-1 reflection passes\n`);
    console.log(formatTable(report));
    const comparisons = formatComparisons(report);
    if (comparisons) console.log(`\nPaired, query by query (two-sided t-test):\n${comparisons}`);
    for (const w of warnings) console.log(`WARNING: ${w}`);
    if (rerankerInfo.random_weights) console.log(`\n${RANDOM_WEIGHTS_BANNER}`);
    console.log(`\nwrote ${out}`);
  } finally {
    await reranker.close();
    await embedderModel?.close();
    await crossModel?.close();
    embeddingCache?.close();
  }
}

main().catch((err: unknown) => {
  const code = err instanceof Error && 'code' in err ? err.code : undefined;
  if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_')) console.error(`${err instanceof Error ? err.message : String(err)}\n${USAGE}`);
  else console.error(err instanceof NotaryError ? `${err.code}: ${err.message}` : err);
  process.exitCode = 1;
});
