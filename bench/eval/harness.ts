import os from 'node:os';
import type { NotaryConfig } from '../../core/config.js';
import { NotaryError } from '../../core/errors.js';
import type { SearchIndex } from '../../indexer/search-index.js';
import type { Reranker } from '../../reranker/reranker.js';
import type { SearchPipeline } from '../../search/pipeline.js';
import type { DenseRetrieval } from '../../search/request-state.js';
import type { SearchPipelineOptions } from '../../search/tuning.js';
import { CrossEncoderStage, crossEncoderStageOptions } from '../../search/cross-encoder.js';
import type { Runtime } from '../../runtime/index.js';
import { buildCranfieldIndex, cranfieldDir, judgmentsFor, loadCranfield } from './cranfield.js';
import { DOC_SITES } from './doc-sites.js';
import { pageBm25Ranker, storedPageDocuments } from './page-bm25.js';
import { buildDocSiteIndex } from './pgdocs.js';
import { pairedComparison, type PairedComparison } from './compare.js';
import type { QueryMetrics } from './metrics.js';
import type { EvalDenseOptions } from './dense.js';
import type { EvalRerankerInfo } from './reranker-info.js';
import { bm25Ranker, evalSearchConfig, evaluateRankers, pipelineRanker, type EvalQuery, type Ranker, type RowResult } from './run.js';

export const EVAL_SETS = ['cranfield', 'pgdocs', 'pydocs'] as const;
export type EvalSetName = (typeof EVAL_SETS)[number];
export const EVAL_ROWS = ['bm25', 'page_bm25', 'hybrid', 'depth1', 'depth2', 'depth3', 'depth2_cross'] as const;
export type EvalRowName = (typeof EVAL_ROWS)[number];

export const ROW_LABELS: Record<EvalRowName, string> = {
  bm25: 'BM25 alone (passages)',
  page_bm25: 'page-level BM25 (title x2, k1 0.9, b 0.4)',
  hybrid: 'BM25 + dense, RRF (no reranker)',
  depth1: 'depth 1',
  depth2: 'depth 2',
  depth3: 'depth 3',
  depth2_cross: 'depth 2, rerank_score from the cross-encoder',
};

export interface SetReport {
  queries: number;
  documents: number;
  passages: number;
  index_ms: number;
  crawl_ms?: number;
  /** Time to embed every passage (dense retrieval). */
  embed_ms?: number;
  /** What a hit is on this set. */
  judged_by: string;
  rows: Partial<Record<EvalRowName, RowResult & { label: string; per_query: Record<keyof QueryMetrics, number[]> }>>;
  /** Query ids in the order of every row's per_query lists (bench/eval-compare.ts pairs two reports by them). */
  query_ids?: string[];
  /** Row against row, query by query, on nDCG@10 and MRR@10 (paired t-test). */
  comparisons: PairedComparison[];
  /** The same on the queries tuning never saw, when the set's reported queries include tuning ones (Cranfield). */
  comparisons_held_out?: PairedComparison[];
}

/** The pairs worth asking "did this step help?" about, baseline first. */
export const COMPARED_ROWS: ReadonlyArray<readonly [EvalRowName, EvalRowName]> = [
  ['bm25', 'hybrid'],
  ['bm25', 'depth1'],
  ['page_bm25', 'depth1'],
  ['page_bm25', 'depth2'],
  ['hybrid', 'depth1'],
  ['depth1', 'depth2'],
  ['depth2', 'depth3'],
  ['depth1', 'depth3'],
  ['depth1', 'depth2_cross'],
  ['depth2', 'depth2_cross'],
];
const COMPARED_METRICS = ['ndcg_10', 'mrr_10', 'success_1'] as const;
/** The metric each set is judged on: graded relevance on Cranfield, the known item's rank on the documentation sets. */
export const HEADLINE_METRIC: Record<EvalSetName, (typeof COMPARED_METRICS)[number]> = { cranfield: 'ndcg_10', pgdocs: 'mrr_10', pydocs: 'mrr_10' };

export interface EvalReport {
  date: string;
  generated_at: string;
  command: string;
  machine: { cpu: string; cores: number; node: string; os: string; memory_gb: number; load_average_at_start: number[] };
  reranker: EvalRerankerInfo;
  reranker_random_weights: boolean;
  /** The depth2_cross row's cross-encoder; null without that row. */
  cross_encoder?: EvalRerankerInfo | null;
  /** First stage of the depth rows: "bm25" or "hybrid (bm25 + <embedding model>)". */
  retrieval: string;
  /** The passage index backend the sets were searched through (the "bm25" row is that backend's own ranking). */
  index_backend: string;
  warnings: string[];
  settings: {
    rerank_top_n: number;
    /** search.max_results the pipeline rows ran with: raised to the eval depth so Recall@100 sees every result. */
    max_results: number;
    passage_min_words: number;
    passage_max_words: number;
    pgdocs_sample_seed: string;
  };
  sets: Partial<Record<EvalSetName, SetReport>>;
}

export interface SearchEvalOptions {
  config: NotaryConfig;
  reranker: Reranker;
  rerankerInfo: EvalRerankerInfo;
  sets: readonly EvalSetName[];
  rows: readonly EvalRowName[];
  /** Dense retrieval: embed every passage; the depth rows then retrieve with BM25 + dense (RRF). */
  dense?: EvalDenseOptions;
  /** The depth2_cross row's cross-encoder (from search.cross_encoder_from_depth on, as the service runs it). */
  crossEncoder?: Reranker;
  crossEncoderInfo?: EvalRerankerInfo;
  /** Cranfield: only the queries bench/tune-search.ts never saw (the 2nd, 4th, ...: 112 of 225). */
  cranfieldHeldOut?: boolean;
  /** Cranfield: the first n queries; default all 225. */
  cranfieldQueries?: number;
  /** pgdocs: size of the fixed-seed sample. */
  pgdocsQueries?: number;
  /** pydocs: size of the fixed-seed sample. */
  pydocsQueries?: number;
  /** Search settings other than the configured ones (tuning variants). */
  pipelineOptions?: SearchPipelineOptions;
  /** The passage index backend each set is searched through (config.indexer.backend; --backend). */
  indexBackend?: string;
  command: string;
  warnings: string[];
  log: (msg: string) => void;
}

function parseList<T extends string>(raw: string | undefined, allowed: readonly T[], what: string): T[] {
  if (raw === undefined) return [...allowed];
  const items = raw.split(',').map((s) => s.trim()).filter(Boolean);
  const bad = items.filter((s) => !(allowed as readonly string[]).includes(s));
  if (bad.length > 0 || items.length === 0) {
    throw new NotaryError('invalid_request', `--${what} takes a comma-separated list of ${allowed.join(', ')}; got "${raw}"`);
  }
  return [...new Set(items)] as T[];
}

export function parseSets(raw: string | undefined): EvalSetName[] {
  return parseList(raw, EVAL_SETS, 'sets');
}

export function parseRows(raw: string | undefined): EvalRowName[] {
  return parseList(raw, EVAL_ROWS, 'rows');
}

export function machineInfo(): EvalReport['machine'] {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    node: process.version,
    os: `${os.platform()} ${os.release()}`,
    memory_gb: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    load_average_at_start: os.loadavg().map((x) => Math.round(x * 100) / 100),
  };
}

function rankerFor(row: EvalRowName, index: SearchIndex, pipeline: SearchPipeline, firstStage: SearchPipeline | null, pageBm25: Ranker, cross: SearchPipeline | null): Ranker {
  if (row === 'bm25') return bm25Ranker(index);
  if (row === 'depth2_cross') {
    if (!cross) throw new NotaryError('invalid_request', 'the depth2_cross row needs a cross-encoder (--cross-encoder DIR)');
    return pipelineRanker(cross, 2);
  }
  if (row === 'page_bm25') return pageBm25;
  if (row === 'hybrid') {
    if (!firstStage) throw new NotaryError('invalid_request', 'the hybrid row needs dense retrieval (--dense or --embedder)');
    return pipelineRanker(firstStage, 1);
  }
  return pipelineRanker(pipeline, Number(row.slice('depth'.length)));
}

async function runRows(
  setName: EvalSetName,
  runtime: Runtime,
  queries: readonly EvalQuery[],
  keyOf: (url: string) => string,
  options: SearchEvalOptions,
  searchConfig: NotaryConfig['search'],
  dense: DenseRetrieval | undefined,
  pageBm25: Ranker,
  heldOut?: (queryIndex: number) => boolean,
): Promise<Pick<SetReport, 'rows' | 'query_ids' | 'comparisons' | 'comparisons_held_out'>> {
  const pipelineOptions = options.pipelineOptions ?? {};
  const { index } = runtime;
  const pipeline = runtime.searchPipeline({ reranker: options.reranker, search: searchConfig, options: pipelineOptions, dense });
  const firstStage = dense
    ? runtime.searchPipeline({ reranker: options.reranker, search: { ...searchConfig, rerank_top_n: 0 }, options: pipelineOptions, dense })
    : null;
  const cross = options.crossEncoder
    ? runtime.searchPipeline({ reranker: options.reranker, search: searchConfig, options: pipelineOptions, dense, crossEncoder: new CrossEncoderStage(options.crossEncoder, crossEncoderStageOptions(searchConfig)) })
    : null;
  const started = performance.now();
  let lastShown = performance.now();
  const results = await evaluateRankers(
    queries,
    options.rows.map((row) => ({ name: row, ranker: rankerFor(row, index, pipeline, firstStage, pageBm25, cross) })),
    keyOf,
    {
      onProgress: (done, total) => {
        if (performance.now() - lastShown > 10_000 && done < total) {
          lastShown = performance.now();
          options.log(`${setName}: ${done}/${total} queries`);
        }
      },
    },
  );
  const rows: SetReport['rows'] = {};
  for (const [row, { perQuery, ...result }] of results) {
    const perMetric = (metric: keyof QueryMetrics) => perQuery.map((m) => m[metric]);
    rows[row] = {
      label: ROW_LABELS[row],
      ...result,
      per_query: { ndcg_10: perMetric('ndcg_10'), mrr_10: perMetric('mrr_10'), recall_100: perMetric('recall_100'), success_1: perMetric('success_1'), success_10: perMetric('success_10') },
    };
  }
  const compare = (keep: (i: number) => boolean): PairedComparison[] => {
    const out: PairedComparison[] = [];
    for (const [baseline, candidate] of COMPARED_ROWS) {
      const a = results.get(baseline)?.perQuery.filter((_, i) => keep(i));
      const b = results.get(candidate)?.perQuery.filter((_, i) => keep(i));
      if (!a || !b || a.length < 2) continue;
      for (const metric of COMPARED_METRICS) {
        out.push(pairedComparison(metric, { name: baseline, scores: a.map((m) => m[metric]) }, { name: candidate, scores: b.map((m) => m[metric]) }));
      }
    }
    return out;
  };
  options.log(`${setName}: ${options.rows.length} rows done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return { rows, query_ids: queries.map((q) => q.id), comparisons: compare(() => true), ...(heldOut ? { comparisons_held_out: compare(heldOut) } : {}) };
}

/** Builds each set's index through the real indexing path and runs every row over its queries. */
export async function runSearchEval(options: SearchEvalOptions): Promise<EvalReport> {
  const { config } = options;
  const machine = machineInfo();
  const searchConfig: NotaryConfig['search'] = evalSearchConfig(config.search);
  const sets: EvalReport['sets'] = {};

  if (options.sets.includes('cranfield')) {
    const collection = loadCranfield(cranfieldDir());
    const pool = options.cranfieldHeldOut ? collection.queries.filter((_, i) => i % 2 === 1) : collection.queries;
    const queries: EvalQuery[] = pool.slice(0, options.cranfieldQueries ?? pool.length).map((q) => ({
      id: String(q.id),
      text: q.text,
      judgments: judgmentsFor(collection, q.id),
    }));
    const built = await buildCranfieldIndex(collection.docs, config.indexer, {
      ...(options.dense ? { dense: options.dense } : {}),
      log: options.log,
    });
    options.log(`cranfield: ${collection.docs.length} documents -> ${built.passages} passages in ${built.indexMs.toFixed(0)} ms`);
    try {
      sets.cranfield = {
        queries: queries.length,
        documents: collection.docs.length,
        passages: built.passages,
        index_ms: Math.round(built.indexMs),
        ...(built.embedMs !== undefined ? { embed_ms: Math.round(built.embedMs) } : {}),
        judged_by:
          'cranqrel, gain = 5 - grade (grades 1..4; -1 and 5 are not relevant), linear-gain nDCG' +
          (options.cranfieldHeldOut ? '; held-out queries only (2nd, 4th, ...: never used for tuning)' : ''),
        ...(await runRows(
          'cranfield',
          built.runtime,
          queries,
          (url) => url,
          options,
          searchConfig,
          built.dense,
          pageBm25Ranker(await storedPageDocuments(built.storage.db)),
          // Tuning used the 1st, 3rd, ... queries: in a full run the 2nd, 4th, ... are the held-out half.
          options.cranfieldHeldOut ? undefined : (i) => i % 2 === 1,
        )),
      };
    } finally {
      await built.close();
    }
  }

  for (const site of DOC_SITES) {
    if (!options.sets.includes(site.name)) continue;
    const queries = site.queries(options);
    const built = await buildDocSiteIndex({
      dir: site.dir,
      name: site.name,
      indexer: config.indexer,
      log: options.log,
      ...(options.dense ? { dense: options.dense } : {}),
    });
    try {
      const pageBm25 = pageBm25Ranker(await storedPageDocuments(built.storage.db), { exclude: (url) => site.generatedIndex(site.key(url)) });
      sets[site.name] = {
        queries: queries.length,
        documents: built.pagesStored,
        passages: built.passages,
        index_ms: Math.round(built.indexMs),
        crawl_ms: Math.round(built.crawlMs),
        ...(built.embedMs !== undefined ? { embed_ms: Math.round(built.embedMs) } : {}),
        judged_by: site.judgedBy,
        ...(await runRows(site.name, built.runtime, queries, site.key, options, searchConfig, built.dense, pageBm25)),
      };
    } finally {
      await built.close();
    }
  }

  const now = new Date();
  return {
    date: now.toISOString().slice(0, 10),
    generated_at: now.toISOString(),
    command: options.command,
    machine,
    reranker: options.rerankerInfo,
    reranker_random_weights: options.rerankerInfo.random_weights,
    cross_encoder: options.crossEncoderInfo ?? null,
    retrieval: options.dense ? `hybrid (bm25 + ${options.dense.embedder.model}, RRF)` : 'bm25',
    index_backend: options.indexBackend ?? 'sqlite-fts5',
    warnings: options.warnings,
    settings: {
      rerank_top_n: searchConfig.rerank_top_n,
      max_results: searchConfig.max_results,
      passage_min_words: config.indexer.passage_min_words,
      passage_max_words: config.indexer.passage_max_words,
      pgdocs_sample_seed: 'testkit/pgdocs.ts sample() default seed',
    },
    sets,
  };
}

const fmt = (x: number, digits = 3): string => (Number.isFinite(x) ? x.toFixed(digits) : '-');

/** The report as a fixed-width text table, one line per set and row. */
export function formatTable(report: EvalReport): string {
  const header = ['set', 'row', 'nDCG@10', 'MRR@10', 'R@100', 'S@1', 'S@10', 'p50 ms', 'p95 ms', 'results', 'queries'];
  const lines: string[][] = [header];
  for (const setName of EVAL_SETS) {
    const set = report.sets[setName];
    if (!set) continue;
    for (const rowName of EVAL_ROWS) {
      const row = set.rows[rowName];
      if (!row) continue;
      const m = row.metrics;
      lines.push([
        setName,
        (rowName === 'depth2_cross' && report.cross_encoder?.random_weights) || (report.reranker_random_weights && rowName !== 'bm25')
          ? `${row.label} (RANDOM model)`
          : row.label,
        fmt(m.ndcg_10),
        fmt(m.mrr_10),
        fmt(m.recall_100),
        fmt(m.success_1),
        fmt(m.success_10),
        fmt(row.latency_ms.p50, 1),
        fmt(row.latency_ms.p95, 1),
        fmt(row.mean_results, 1),
        String(row.queries),
      ]);
    }
  }
  const widths = header.map((_, c) => Math.max(...lines.map((l) => (l[c] ?? '').length)));
  const render = (l: string[]): string => `| ${l.map((cell, c) => cell.padEnd(widths[c] ?? 0)).join(' | ')} |`;
  const rule = `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`;
  return [render(header), rule, ...lines.slice(1).map(render)].join('\n');
}

/** One line per compared pair on each set's headline metric: difference, 95% CI, wins/losses/ties, p. */
export function formatComparisons(report: Pick<EvalReport, 'sets'>): string {
  const lines: string[] = [];
  for (const setName of EVAL_SETS) {
    const set = report.sets[setName];
    if (!set) continue;
    const metric = HEADLINE_METRIC[setName];
    const all = [
      ...set.comparisons.filter((x) => x.metric === metric || (setName !== 'cranfield' && x.metric === 'success_1')).map((c) => ({ c, label: setName })),
      ...(set.comparisons_held_out ?? []).filter((x) => x.metric === metric).map((c) => ({ c, label: `${setName} held-out half` })),
    ];
    for (const { c, label } of all) {
      const sign = (x: number): string => (x >= 0 ? '+' : '') + x.toFixed(3);
      lines.push(
        `${label.padEnd(24)} ${c.metric.padEnd(9)} ${`${c.baseline} -> ${c.candidate}`.padEnd(20)} ${sign(c.difference)} ` +
          `(95% CI ${sign(c.ci_95[0])} .. ${sign(c.ci_95[1])}), ${c.wins} better / ${c.losses} worse / ${c.ties} same, p = ${c.p_value.toPrecision(2)}`,
      );
    }
  }
  return lines.join('\n');
}
