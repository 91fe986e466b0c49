export interface BenchArgs {
  /** Known-item queries timed per rerank setting. */
  queries: number;
  /** Untimed queries run first for each setting. */
  warmUp: number;
  /** Crawl max_concurrency and per_host_concurrency. */
  concurrency: number;
  /** Passages scored by the reranker, one timed series each. */
  rerankTopN: number[];
  /** Queries whose candidate lists are scored again in isolation for the reranker's own pairs/s. */
  throughputQueries: number;
  quick: boolean;
  /** Passages embedded by every embedding setting (0 skips the embedding phase). */
  embedPassages: number;
  /** Passages per interleaved round of the embedding phase. */
  embedRound: number;
  /** Embedding settings to measure by name (the fp32 baseline always runs); empty = all. */
  embedSettings: string[];
  /** Phases to run: crawl and index always run (the others need their passages). */
  skipSearch: boolean;
  /** Seconds of load per server setting and connection count in the serve phase; 0 skips the phase. */
  serveSeconds: number;
  /** Serve-phase server settings by name ("1 process, no caches", "1 process", "2 processes", "two models"); empty: all. */
  serveSettings: string[];
  /** Two-model server variants (search settings over the defaults), each measured at depth 2 beside the main one. */
  twoModelVariants: Array<Record<string, number>>;
  /** Output file; the default is chosen by the runner from the date. */
  out: string | null;
  /** The index backend measured (indexer.backend); postgres and meilisearch need their server. */
  backend: 'sqlite-fts5' | 'postgres' | 'meilisearch';
  /** A PostgreSQL server: the bench creates a database of its own in it (and drops it), storage and index there. */
  databaseUrl: string | null;
  meilisearchUrl: string | null;
  meilisearchKey: string | null;
  /** Values of `indexer.<backend>.vectors` (issue 34): the first for the run, every one served beside FTS5; empty: the default. */
  vectors: string[];
  /** Keep the data folder (and a Meilisearch run's indexes, a PostgreSQL run's database) for other benches, e.g. bench/depth1-cpu.ts --data. */
  keepData: boolean;
  /**
   * PostgreSQL measured in the same run beside the run's backend and its FTS5 baseline (issue 34's three backends):
   * the corpus crawled again into a database of its own on --database-url, storage and index there, its shipped settings.
   */
  withPostgres: boolean;
}

export const DEFAULT_ARGS: BenchArgs = {
  queries: 200,
  warmUp: 5,
  concurrency: 16,
  rerankTopN: [0, 20, 50],
  throughputQueries: 20,
  quick: false,
  embedPassages: 1024,
  embedRound: 512,
  embedSettings: [],
  skipSearch: false,
  serveSeconds: 15,
  serveSettings: [],
  twoModelVariants: [],
  out: null,
  backend: 'sqlite-fts5',
  databaseUrl: null,
  meilisearchUrl: null,
  meilisearchKey: null,
  vectors: [],
  keepData: false,
  withPostgres: false,
};

export const USAGE = `usage: npm run bench -- [--quick] [--queries N] [--out FILE] [--concurrency N] [--rerank 0,20,50] [--throughput-queries N]
  --quick                50 queries and 10 queries for the reranker's own pairs/s (a smoke test)
  --queries N            timed queries per rerank setting (default 200)
  --out FILE             JSON output (default bench/results/bench-<date>.json, -quick.json with --quick)
  --concurrency N        crawl concurrency, overall and per host (default 16)
  --rerank LIST          rerank_top_n settings (default 0,20,50)
  --throughput-queries N queries whose candidate lists are re-scored for pairs/s (default 20)
  --embed-passages N     passages embedded by each embedding setting, 0 = no embedding phase (default 1024, 256 with --quick)
  --embed-round N        passages per interleaved round of the embedding phase (default 512)
  --embed-settings LIST  embedding settings by name, comma-separated (default all; the fp32 baseline always runs)
  --no-search            skip the search phase
  --serve-seconds N      load per setting in the serve phase (notary serve with the real bi-encoder over HTTP at 1 and
                         10 connections, and the per-stage table; default 15, 0 skips it)
  --serve-settings LIST  serve-phase servers by name, separated by ";": "1 process, no caches", "1 process",
                         "2 processes", "two models" (the bi-encoder for depth 1 and the cross-encoder of ../shared
                         from depth 2: depth 1 and 2 at 1 and 10 connections, depth 1 beside depth 2); default all
  --two-model-variants LIST  more two-model servers measured at depth 2 (1 and 10 connections), separated by ";",
                         each a list of search settings: "cross_encoder_window_words=40,cross_encoder_batch_wait_ms=5"
  --backend NAME         the index backend: sqlite-fts5 (default), postgres (pages and index in PostgreSQL; needs
                         --database-url of a server, where a database of its own is made and dropped) or meilisearch
                         (the index on --meilisearch-url with --meilisearch-key; pages in SQLite)
  --vectors LIST         where postgres or meilisearch keep passage vectors (indexer.<backend>.vectors), comma-separated:
                         the first for the run, each measured beside FTS5 (e.g. meilisearch,service)
  --with-postgres        also PostgreSQL in the same run, beside --backend meilisearch (or sqlite-fts5) and the FTS5
                         baseline: the corpus crawled again into a database of its own on --database-url, storage and
                         index there, its shipped settings (issue 34's three backends in one run)`;

export class BenchArgsError extends Error {}

/** "a=1,b=2;c=3" -> [{a: 1, b: 2}, {c: 3}]: search settings (numbers) of the two-model variants. */
export function parseVariants(raw: string | undefined): Array<Record<string, number>> {
  const variants = (raw ?? '').split(';').map((v) => v.trim()).filter((v) => v.length > 0).map((v) => {
    const settings: Record<string, number> = {};
    for (const item of v.split(',')) {
      const [key, value] = item.split('=').map((s) => s.trim());
      if (!key || !/^[a-z_]+$/.test(key) || value === undefined || !/^\d+(\.\d+)?$/.test(value)) {
        throw new BenchArgsError(`--two-model-variants: "${item}" is not setting=number (e.g. cross_encoder_window_words=40)`);
      }
      settings[key] = Number(value);
    }
    return settings;
  });
  if (variants.length === 0) throw new BenchArgsError('--two-model-variants needs at least one variant');
  return variants;
}

/** An integer flag's value (at least `min`); a BenchArgsError naming the flag otherwise. */
export function positiveInt(flag: string, raw: string | undefined, min = 1): number {
  if (raw === undefined || !/^\d+$/.test(raw) || Number(raw) < min) {
    throw new BenchArgsError(`${flag} needs an integer >= ${min}, got ${raw === undefined ? 'nothing' : `"${raw}"`}`);
  }
  return Number(raw);
}

/** Parses the command line (without node and script); throws BenchArgsError with a readable message. */
export function parseBenchArgs(argv: readonly string[]): BenchArgs {
  const args: BenchArgs = { ...DEFAULT_ARGS, rerankTopN: [...DEFAULT_ARGS.rerankTopN] };
  let queriesGiven = false;
  let throughputGiven = false;
  let embedGiven = false;
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i] as string;
    const [name, inline] = flag.startsWith('--') && flag.includes('=') ? [flag.slice(0, flag.indexOf('=')), flag.slice(flag.indexOf('=') + 1)] : [flag, undefined];
    const value = (): string | undefined => inline ?? argv[++i];
    switch (name) {
      case '--quick':
        args.quick = true;
        break;
      case '--queries':
        args.queries = positiveInt(name, value());
        queriesGiven = true;
        break;
      case '--out': {
        const out = value();
        if (!out) throw new BenchArgsError('--out needs a file name');
        args.out = out;
        break;
      }
      case '--concurrency':
        args.concurrency = positiveInt(name, value());
        break;
      case '--throughput-queries':
        args.throughputQueries = positiveInt(name, value());
        throughputGiven = true;
        break;
      case '--embed-passages':
        args.embedPassages = positiveInt(name, value(), 0);
        embedGiven = true;
        break;
      case '--embed-round':
        args.embedRound = positiveInt(name, value());
        break;
      case '--embed-settings':
        args.embedSettings = (value() ?? '').split(',').map((s) => s.trim()).filter((s) => s.length > 0);
        if (args.embedSettings.length === 0) throw new BenchArgsError('--embed-settings needs a list of setting names');
        break;
      case '--serve-seconds':
        args.serveSeconds = positiveInt('--serve-seconds', value(), 0);
        break;
      case '--serve-settings':
        args.serveSettings = (value() ?? '').split(';').map((s) => s.trim()).filter((s) => s.length > 0);
        if (args.serveSettings.length === 0) throw new BenchArgsError('--serve-settings needs a list of setting names');
        break;
      case '--two-model-variants':
        args.twoModelVariants = parseVariants(value());
        break;
      case '--no-search':
        args.skipSearch = true;
        break;
      case '--keep-data':
        args.keepData = true;
        break;
      case '--with-postgres':
        args.withPostgres = true;
        break;
      case '--backend': {
        const backend = value();
        if (backend !== 'sqlite-fts5' && backend !== 'postgres' && backend !== 'meilisearch') {
          throw new BenchArgsError(`--backend takes sqlite-fts5, postgres or meilisearch, got "${backend ?? ''}"`);
        }
        args.backend = backend;
        break;
      }
      case '--database-url':
        args.databaseUrl = value() ?? null;
        break;
      case '--meilisearch-url':
        args.meilisearchUrl = value() ?? null;
        break;
      case '--meilisearch-key':
        args.meilisearchKey = value() ?? null;
        break;
      case '--vectors':
        args.vectors = (value() ?? '').split(',').map((s) => s.trim()).filter((s) => s.length > 0);
        if (args.vectors.length === 0) throw new BenchArgsError('--vectors needs a list such as meilisearch,service');
        break;
      case '--rerank': {
        const raw = value();
        const list = (raw ?? '').split(',').map((s) => s.trim()).filter((s) => s.length > 0);
        if (list.length === 0) throw new BenchArgsError('--rerank needs a list such as 0,20,50');
        args.rerankTopN = list.map((s) => positiveInt(name, s, 0));
        break;
      }
      default:
        throw new BenchArgsError(`unknown argument "${flag}"`);
    }
  }
  if (args.quick) {
    if (!queriesGiven) args.queries = 50;
    if (!throughputGiven) args.throughputQueries = 10;
    if (!embedGiven) args.embedPassages = 256;
  }
  args.throughputQueries = Math.min(args.throughputQueries, args.queries);
  if (args.backend === 'postgres' && !args.databaseUrl) throw new BenchArgsError('--backend postgres needs --database-url');
  if (args.backend === 'meilisearch' && !args.meilisearchUrl) throw new BenchArgsError('--backend meilisearch needs --meilisearch-url');
  if (args.withPostgres && args.backend === 'postgres') throw new BenchArgsError('--with-postgres is for --backend meilisearch or sqlite-fts5 (postgres is the run\'s own backend already)');
  if (args.withPostgres && !args.databaseUrl) throw new BenchArgsError('--with-postgres needs --database-url of a PostgreSQL server (a database of its own is made there and dropped)');
  if (args.vectors.length > 0 && args.backend === 'sqlite-fts5') throw new BenchArgsError('--vectors is for --backend postgres or meilisearch');
  return args;
}
