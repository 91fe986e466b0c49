/** The benchmark's phases over the crawled corpus: crawl, index, the tokenizer, and searches timed stage by stage. */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { NotaryConfig } from '../../core/config.js';
import { runCrawl } from '../../crawler/index.js';
import type { OnnxReranker } from '../../reranker/index.js';
import { BertPairTokenizer } from '../../reranker/index.js';
import type { Runtime } from '../../runtime/index.js';
import type { SearchPipeline } from '../../search/pipeline.js';
import { serveDirectory } from '../../testkit/serve-static.js';
import { measureRerankerThroughput, type BenchPair } from './reranker-throughput.js';
import type { KnownItemQuery } from '../../testkit/pgdocs.js';
import type { SearchSeries } from './report.js';
import { perSecond, round2, summarise } from './stats.js';
import { TimedReranker } from './timed-reranker.js';
import { note } from './note.js';

function cpuMsSince(before: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

export interface CrawlPhase {
  pages_stored: number;
  html_files: number;
  fetched: number;
  duplicates: number;
  skipped: number;
  failed: number;
  http_requests: number;
  wall_s: number;
  /** Pages stored over the wall time of runCrawl (sitemap discovery included). */
  pages_per_s: number;
  /** The crawler's own rate: finished page requests per second. */
  crawler_reported_pages_per_s: number;
  concurrency: number;
  /** CPU time of this process (user + system) during the crawl: load-independent cost. */
  cpu_s: number;
  pages_per_cpu_s: number;
}

export async function crawlPhase(runtime: Runtime, docsDir: string, concurrency: number): Promise<CrawlPhase> {
  const { config, pages } = runtime;
  const htmlFiles = readdirSync(docsDir).filter((f) => f.endsWith('.html')).length;
  const server = await serveDirectory(docsDir);
  try {
    const crawlerConfig: NotaryConfig['crawler'] = {
      ...config.crawler,
      seeds: [`${server.url}/index.html`],
      per_host_delay_ms: 0,
      max_concurrency: concurrency,
      per_host_concurrency: concurrency,
    };
    note(`crawl: ${docsDir} (${htmlFiles} .html files) from ${server.url}, concurrency ${concurrency}, politeness off`);
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    const summary = await runCrawl({
      config: crawlerConfig,
      pages,
      runs: runtime.runs,
      frontier: runtime.frontier,
      log: (level, msg) => {
        if (level === 'warn') note(`crawl warning: ${msg}`);
      },
    });
    const wallMs = performance.now() - started;
    const cpuMs = cpuMsSince(cpuBefore);
    const counts = await pages.counts();
    return {
      pages_stored: counts.pages,
      html_files: htmlFiles,
      fetched: summary.fetched,
      duplicates: summary.duplicates,
      skipped: summary.skipped.total,
      failed: summary.failed,
      http_requests: server.requests.length,
      wall_s: round2(wallMs / 1000),
      pages_per_s: perSecond(counts.pages, wallMs),
      crawler_reported_pages_per_s: summary.pagesPerSecond,
      concurrency,
      cpu_s: round2(cpuMs / 1000),
      pages_per_cpu_s: perSecond(counts.pages, cpuMs),
    };
  } finally {
    await server.close();
  }
}

export interface IndexPhase {
  pages: number;
  passages: number;
  failed: number;
  wall_s: number;
  passages_per_s: number;
  pages_per_s: number;
  index_bytes: number | null;
  cpu_s: number;
  passages_per_cpu_s: number;
}

export async function indexPhase(runtime: Runtime): Promise<IndexPhase> {
  const indexer = runtime.indexer();
  const index = runtime.index;
  note('index: extracting, cutting and indexing every stored page');
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const run = await indexer.runOnce({ batchSize: 100 });
  const wallMs = performance.now() - started;
  const cpuMs = cpuMsSince(cpuBefore);
  const stats = await index.stats();
  return {
    pages: run.indexedPages,
    passages: run.passages,
    failed: run.failed,
    wall_s: round2(wallMs / 1000),
    passages_per_s: perSecond(run.passages, wallMs),
    pages_per_s: perSecond(run.indexedPages, wallMs),
    index_bytes: stats.bytes,
    cpu_s: round2(cpuMs / 1000),
    passages_per_cpu_s: perSecond(run.passages, cpuMs),
  };
}

/** Tokenizer cost alone: query and 200-word passage pairs at the reranker's sequence length (was a timed unit test). */
export function tokenizerPhase(modelDir: string, queries: readonly string[]): { pairs: number; us_per_pair_p50: number; us_per_pair_mean: number } {
  const tokenizer = BertPairTokenizer.fromDir(modelDir);
  const words = 'vacuum reclaims storage occupied by dead tuples in tables and indexes so that the space can be reused by later rows of the same table'.split(' ');
  const passage = Array.from({ length: 200 }, (_, i) => words[i % words.length]).join(' ');
  const perPairUs: number[] = [];
  for (let i = 0; i < 300; i++) {
    const started = performance.now();
    tokenizer.encodePair(queries[i % Math.max(1, queries.length)] ?? 'vacuum', `${passage} ${i}`, 256);
    perPairUs.push((performance.now() - started) * 1000);
  }
  const stats = summarise(perPairUs);
  note(`tokenizer: ${stats.p50} us per 200-word pair (p50)`);
  return { pairs: perPairUs.length, us_per_pair_p50: stats.p50, us_per_pair_mean: stats.mean };
}

export function isHit(urls: readonly string[], targets: readonly string[]): boolean {
  return urls.slice(0, 10).some((url) => targets.includes(path.posix.basename(new URL(url).pathname)));
}

export interface SeriesRecorder {
  topN: number;
  timed: TimedReranker;
  pipeline: SearchPipeline;
  total: number[];
  outside: number[];
  retrieve: number[];
  rerank: number[];
  reranked: number;
  hits: number;
}

/**
 * Every query runs once per rerank setting, the settings interleaved query by query (their order rotating), so a
 * shared machine's changing load falls on all settings alike instead of on whichever series ran last.
 */
export async function searchPhase(input: {
  runtime: Runtime;
  reranker: OnnxReranker;
  topNs: readonly number[];
  queries: readonly KnownItemQuery[];
  warmUp: readonly KnownItemQuery[];
  throughputQueries: number;
}): Promise<SearchSeries[]> {
  const recorders: SeriesRecorder[] = input.topNs.map((topN) => {
    const timed = new TimedReranker(input.reranker);
    const pipeline = input.runtime.searchPipeline({ reranker: timed, search: { rerank_top_n: topN } });
    return { topN, timed, pipeline, total: [], outside: [], retrieve: [], rerank: [], reranked: 0, hits: 0 };
  });
  for (const q of input.warmUp) for (const r of recorders) await r.pipeline.search({ query: q.query, depth: 1 });
  for (const r of recorders) r.timed.reset();
  note(`search: ${input.queries.length} queries at depth 1, rerank_top_n ${input.topNs.join('/')} interleaved`);

  let done = 0;
  for (const q of input.queries) {
    for (let k = 0; k < recorders.length; k++) {
      const r = recorders[(done + k) % recorders.length] as SeriesRecorder;
      const { results, timings } = await r.pipeline.search({ query: q.query, depth: 1 });
      r.total.push(timings.total_ms);
      r.outside.push(timings.total_ms - timings.rerank_ms);
      r.retrieve.push(timings.retrieve_ms);
      r.rerank.push(timings.rerank_ms);
      r.reranked += timings.reranked;
      if (isHit(results.map((x) => x.url), q.targets)) r.hits++;
    }
    done++;
    if (done % 25 === 0) note(`search: ${done}/${input.queries.length} queries`);
  }

  const series: SearchSeries[] = [];
  for (const r of recorders) {
    let inSearch: number | null = null;
    let isolated: SearchSeries['reranker_isolated'] = null;
    if (r.timed.calls.length > 0) {
      const pairs = r.timed.calls.reduce((acc, call) => acc + call.passages.length, 0);
      const ms = r.timed.calls.reduce((acc, call) => acc + call.ms, 0);
      inSearch = perSecond(pairs, ms);
      const calls = r.timed.calls.slice(0, input.throughputQueries);
      const benchPairs: BenchPair[] = calls.flatMap((call) => call.passages.map((passage) => ({ query: call.query, passage })));
      note(`reranker alone: the same ${benchPairs.length} pairs of ${calls.length} queries, in batches of ${r.topN}`);
      const throughput = await measureRerankerThroughput(input.reranker, benchPairs, r.topN);
      isolated = {
        queries: calls.length,
        pairs: benchPairs.length,
        pairs_per_s: round2(throughput.pairs_per_s),
        ms_per_batch_p50: round2(throughput.ms_per_batch_p50),
      };
    }
    const n = Math.max(1, r.total.length);
    series.push({
      rerank_top_n: r.topN,
      queries: r.total.length,
      reranked_mean: round2(r.reranked / n),
      total_ms: summarise(r.total),
      outside_reranker_ms: summarise(r.outside),
      retrieve_ms: summarise(r.retrieve),
      rerank_ms: summarise(r.rerank),
      known_item_hit_at_10: round2(r.hits / n),
      reranker_in_search_pairs_per_s: inSearch,
      reranker_isolated: isolated,
    });
  }
  return series;
}

