import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { NotaryError } from './errors.js';

/** What a tenant's keys may call: searches, reflection (depth 2 and up), extraction, rendered extraction, test keys. */
export const FEATURES = ['search', 'search_reflection', 'extract', 'extract_render', 'test_keys'] as const;
export type Feature = (typeof FEATURES)[number];

export const tierSchema = z.object({
  /** Sustained requests per minute. */
  requests_per_minute: z.number().int().positive().max(1_000_000),
  /** Requests allowed at once before the sustained rate applies. */
  burst: z.number().int().positive().max(1_000_000),
  /** Credits granted to each tenant of the tier once per calendar month (UTC), on its first call or sign-in of the month. */
  monthly_credits: z.number().int().min(0).max(1_000_000_000).default(0),
  /** What the tier's tenants may call (an operator can narrow or widen it per tenant). */
  features: z.array(z.enum(FEATURES)).default([...FEATURES]),
});

/** Tier names: safe in URLs, headers (RateLimit-Policy) and the dashboard. */
export const TIER_NAME = /^[a-z0-9][a-z0-9_-]{0,31}$/;

const hostPattern = z.string().min(1);

const cidrRange = z.string().refine(
  (value) => {
    try {
      ipaddr.parseCIDR(value.trim());
      return true;
    } catch {
      return false;
    }
  },
  { message: 'must be a CIDR range such as 10.0.0.0/8 or fd00::/8' },
);

/** A non-negative decimal written as a string, parsed exactly later (never as a float): "0.001", "2", "12.5". */
export const DECIMAL_PATTERN = /^(0|[1-9]\d*)(\.\d+)?$/;

const creditsByDepth = z.array(z.number().int().min(0)).min(1);

/** The price list: credits by call, and the money price of a credit for pay-per-call modes. */
export const pricingSchema = z
  .object({
    search: z
      .object({
        /**
         * Credits per call by depth: index 0 is depth 1. Depths past the end cost the last entry. Depth 2 costs what
         * depth 1 does: measured on 2026-11-23 it is not significantly better on any set (README, Relevance).
         */
        credits_by_depth: creditsByDepth.default([1, 1, 2]),
      })
      .prefault({}),
    extract: z
      .object({
        /** An extraction with render "never" or "auto". "auto" renders JS shells at this price too. */
        credits: z.number().int().min(0).default(1),
        /** An extraction with render "always". */
        credits_rendered: z.number().int().min(0).default(2),
      })
      .prefault({}),
    /** The money price of one credit for pay-per-call modes, in a named asset. */
    credit_price: z
      .object({
        amount: z.string().regex(DECIMAL_PATTERN, 'must be a decimal number written as a string, e.g. "0.001"').default('0.001'),
        asset: z.string().regex(/^[A-Za-z0-9.]{1,16}$/, 'must be an asset symbol such as USDC').default('USDC'),
        /** Decimals of the asset's smallest unit (USDC: 6). */
        decimals: z.number().int().min(0).max(36).default(6),
      })
      .prefault({}),
  })
  .prefault({})
  .superRefine((pricing, ctx) => {
    const { amount, decimals } = pricing.credit_price;
    const fraction = amount.split('.')[1]?.replace(/0+$/, '') ?? '';
    if (fraction.length > decimals) {
      ctx.addIssue({ code: 'custom', path: ['credit_price', 'amount'], message: `has more than ${decimals} decimal places (the asset's decimals)` });
    }
  });
const evmAddress = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 20-byte hex address');
const caip2Evm = z.string().regex(/^eip155:[1-9]\d*$/, 'must be a CAIP-2 EVM network such as eip155:8453');

/** A facilitator's Ed25519 public key (JWK, as its /.well-known/jwks.json lists it). */
const ed25519Jwk = z.object({
  kty: z.literal('OKP'),
  crv: z.literal('Ed25519'),
  x: z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'must be the base64url of a 32-byte Ed25519 public key'),
  kid: z.string().min(1).optional(),
  alg: z.literal('EdDSA').optional(),
  use: z.literal('sig').optional(),
});

const x402ModeSchema = z.object({
  enabled: z.boolean().default(false),
  /** CAIP-2 network of the asset (default Base mainnet). */
  network: caip2Evm.default('eip155:8453'),
  /** The EIP-3009 token contract (default USDC on Base); its decimals must be pricing.credit_price.decimals. */
  asset: evmAddress.default('0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'),
  /** The token's EIP-712 domain name and version (USDC on Base: "USD Coin", "2"). */
  asset_name: z.string().min(1).default('USD Coin'),
  asset_version: z.string().min(1).default('2'),
  /** Where payments go. Required when enabled. */
  pay_to: evmAddress.optional(),
  /** Base URL of a facilitator speaking the standard API (POST /verify, POST /settle, GET /supported). */
  facilitator_url: z.url().optional(),
  /** JSON-RPC URL of the same chain: reconciles settlements whose outcome is unknown. Required when enabled. */
  rpc_url: z.url().optional(),
  /** How long one question to rpc_url (its few requests together) may take before reconciliation gives up for now. */
  rpc_timeout_ms: z.number().int().positive().default(10_000),
  /** Ed25519 keys of facilitators whose X-402-Receipt settlement receipts are accepted (their JWKS entries). */
  receipt_keys: z.array(ed25519Jwk).default([]),
  /** How long a challenge (its nonce) can be paid against. */
  challenge_ttl_s: z.number().int().min(10).max(3600).default(300),
  /** How long an X-402-Receipt can be redeemed after its settlement (a failed call leaves it usable). */
  receipt_ttl_s: z.number().int().min(60).max(7 * 24 * 3600).default(3600),
  /** maxTimeoutSeconds of the standard requirements: the validity the client gives its authorization. */
  max_timeout_s: z.number().int().min(30).max(3600).default(300),
  verify_timeout_ms: z.number().int().positive().default(10_000),
  /** A settle without an answer by then is recorded as outcome-unknown and reconciled on chain. */
  settle_timeout_ms: z.number().int().positive().default(30_000),
  /** Rate-limit tier of x402 payers (per payer address); default default_tier. */
  tier: z.string().optional(),
  /**
   * Secret binding challenges to their request (HMAC). Default: generated once and kept in the database, so every
   * node of a deployment sharing it issues challenges the others accept. NOTARY_X402_CHALLENGE_SECRET overrides.
   */
  challenge_secret: z.string().min(32).optional(),
});

/** `notary facilitator`: the standard x402 facilitator API settling on an EVM chain, signing settlement receipts. */
const facilitatorSchema = z.object({
  host: z.string().min(1).default('127.0.0.1'),
  port: z.number().int().min(0).max(65535).default(8402),
  /** JSON-RPC URL of the chain it settles on. */
  rpc_url: z.url().optional(),
  /** Hex private key of the account that pays gas (prefer NOTARY_FACILITATOR_PRIVATE_KEY to a file). */
  private_key: z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 32-byte hex private key').optional(),
  /** Name put in receipts as `iss`; default the facilitator's base URL. */
  issuer: z.string().min(1).optional(),
  /** Ed25519 receipt-signing keys (generated on first start); default <data_dir>/facilitator-keys.json. */
  keys_file: z.string().optional(),
  /** How long a settlement waits for its transaction's receipt. */
  confirmation_timeout_ms: z.number().int().positive().default(60_000),
  /** How often the chain is polled for receipts. */
  poll_interval_ms: z.number().int().positive().default(1000),
});

export const configSchema = z
  .object({
    data_dir: z.string().min(1).default('./data'),
    log_level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    server: z
      .object({
        host: z.string().min(1).default('127.0.0.1'),
        port: z.number().int().min(0).max(65535).default(8080),
        body_limit_bytes: z.number().int().positive().default(16 * 1024),
        /**
         * Processes answering requests on the one port (node:cluster; they share the data folder, and rate limits
         * move to the database when more than one serves): 1 serves from the main process, 0 starts one per core.
         * Each holds its own copy of the vectors and the model. The main process keeps the crawl and other
         * background work. NOTARY_SERVER_WORKERS overrides.
         */
        workers: z.number().int().min(0).max(64).default(1),
        /** Run the crawl worker for the configured seeds inside `notary serve`. */
        crawl_on_start: z.boolean().default(true),
        /** Time a client has to send the request headers. */
        headers_timeout_ms: z.number().int().positive().default(10_000),
        /** Time a client has to send the whole body once the headers are in; a slower body gets a 408 problem. */
        body_timeout_ms: z.number().int().positive().default(10_000),
        /** How long an idle keep-alive connection stays open. */
        keep_alive_timeout_ms: z.number().int().positive().default(5_000),
        /**
         * How long a start waits for PostgreSQL, Redis and Meilisearch to answer (retrying each second) before it gives
         * up with one line naming the setting to fix. NOTARY_START_WAIT_MS overrides.
         */
        start_wait_ms: z.number().int().min(0).default(30_000),
        /**
         * How long a stop (SIGTERM, SIGINT) waits for requests in flight and background work to finish before the
         * process exits anyway (exit 1, with a line saying what was cut short).
         */
        shutdown_timeout_ms: z.number().int().positive().default(10_000),
        /** Largest request header block; a larger one gets a 431 problem. */
        max_header_bytes: z.number().int().min(1024).max(1024 * 1024).default(16 * 1024),
        /** HTTPS served directly (HTTP/2 with HTTP/1.1 fallback) when a certificate and key are given (PEM files). */
        tls: z
          .object({
            cert_file: z.string().min(1).optional(),
            key_file: z.string().min(1).optional(),
            /** Offer HTTP/2 (ALPN h2) beside HTTP/1.1. */
            http2: z.boolean().default(true),
          })
          .prefault({}),
        /**
         * Behind a TLS-terminating proxy: the proxies whose X-Forwarded-For/-Proto/-Host are believed (addresses or
         * CIDR ranges, e.g. ["10.0.0.0/8"]; true trusts every hop). Default none: the client address is the socket's.
         */
        trusted_proxies: z.union([z.boolean(), z.array(z.string().min(1))]).default(false),
        /**
         * GET /metrics is served only to `Authorization: Bearer <metrics_token>` (at least 16 characters). Unset: not
         * served at all (it shows per-route traffic, payment modes and the process's memory and version).
         */
        metrics_token: z.string().min(16, 'server.metrics_token must be at least 16 characters').optional(),
      })
      .prefault({}),
    /** Shared stores of a scaled-out deployment: rate limits and idempotency records (memory/SQL, or Redis). */
    stores: z
      .object({
        /** memory: rate limits in process (one node), idempotency in the database; redis: both in Redis, shared by every node. */
        backend: z.enum(['memory', 'redis']).default('memory'),
        redis_url: z.string().optional(),
        /** Key prefix, so one Redis can serve several deployments. */
        redis_prefix: z.string().min(1).default('notary:'),
      })
      .prefault({}),
    storage: z
      .object({
        driver: z.enum(['sqlite', 'postgres']).default('sqlite'),
        /** PostgreSQL connection string when driver is postgres. */
        postgres_url: z.string().optional(),
        /** How long one connection attempt to PostgreSQL may take before it counts as failed. */
        connect_timeout_ms: z.number().int().positive().default(5_000),
      })
      .prefault({}),
    crawler: z
      .object({
        seeds: z.array(z.url()).default([]),
        max_pages: z.number().int().positive().default(10_000),
        max_depth: z.number().int().min(0).default(20),
        /**
         * How far from the seeds: path (under each seed's folder; the whole host when the seed is the root), host,
         * domain (registrable domain, subdomains included) or any.
         */
        scope: z.enum(['path', 'host', 'domain', 'any']).default('path'),
        /** Regular expressions a URL must match (any) / must not match (all); they narrow the scope. */
        include: z.array(hostPattern).default([]),
        exclude: z.array(hostPattern).default([]),
        user_agent: z.string().min(1).default('notary-crawler/0.1'),
        contact_url: z.string().min(1).default('https://github.com/notary-search/notary#crawler'),
        respect_robots_txt: z.boolean().default(true),
        use_sitemaps: z.boolean().default(true),
        max_concurrency: z.number().int().positive().default(8),
        per_host_concurrency: z.number().int().positive().default(2),
        /** Delay between two requests to the same host; 0 turns politeness off (loopback benchmarks). */
        per_host_delay_ms: z.number().int().min(0).default(500),
        /** Upper bound on a robots.txt Crawl-delay; a larger one is logged and cut to this. */
        crawl_delay_max_ms: z.number().int().min(0).default(30_000),
        /** Pause of a host that answers 429 (or 503) without a readable Retry-After. */
        retry_after_default_ms: z.number().int().min(0).default(30_000),
        /** Upper bound on the pause a Retry-After header can ask for. */
        retry_after_max_ms: z.number().int().min(0).default(120_000),
        request_timeout_ms: z.number().int().positive().default(20_000),
        max_page_bytes: z.number().int().positive().default(5 * 1024 * 1024),
        /** A page fetched less than this long ago is not fetched again by the background worker. */
        recrawl_after_hours: z.number().positive().default(24),
        renderer: z.enum(['static', 'browser']).default('static'),
        chromium_path: z.string().default('/usr/bin/chromium'),
        /**
         * Several crawler processes (`notary crawl-worker`, on one machine or many) crawl one frontier in PostgreSQL:
         * each joins the running round, leases URLs with FOR UPDATE SKIP LOCKED, and takes over the leases of a
         * worker that died. Needs storage.driver postgres. NOTARY_CRAWL_SHARED_FRONTIER overrides.
         */
        shared_frontier: z.boolean().default(false),
        /** How long a worker's lease on a URL lasts without renewal (a live worker renews every third of it). */
        lease_seconds: z.number().int().min(1).max(3600).default(60),
      })
      .prefault({}),
    extract: z
      .object({
        /**
         * The address policy of every request notary makes (extraction, the crawler's pages, robots.txt and sitemaps):
         * reach loopback, RFC 1918, unique-local and CGNAT addresses (private deployments). Link-local and cloud
         * metadata addresses stay refused whatever this says.
         */
        allow_private_networks: z.boolean().default(false),
        /** Private CIDR ranges that may be reached without allow_private_networks (the narrower, safer choice). */
        allowed_private_ranges: z.array(cidrRange).default([]),
        max_redirects: z.number().int().min(0).max(20).default(5),
        connect_timeout_ms: z.number().int().positive().default(5_000),
        /** Whole fetch: DNS, connect, redirects and body. */
        total_timeout_ms: z.number().int().positive().default(20_000),
        /** Byte cap on a response body (after decompression). */
        max_bytes: z.number().int().positive().default(10 * 1024 * 1024),
        respect_robots_txt: z.boolean().default(true),
        /** How long a fetched document may be served from the in-memory cache when the call gives no max_age. */
        cache_ttl_s: z.number().int().min(0).default(300),
        cache_max_entries: z.number().int().min(0).default(256),
        render: z.enum(['auto', 'never', 'always']).default('auto'),
        render_timeout_ms: z.number().int().positive().default(20_000),
        chromium_path: z.string().default('/usr/bin/chromium'),
        /** Deprecated: pricing.extract.credits. */
        credits: z.number().int().min(0).optional(),
        /** Deprecated: pricing.extract.credits_rendered. */
        credits_rendered: z.number().int().min(0).optional(),
      })
      .prefault({}),
    indexer: z
      .object({
        /**
         * The passage index (and, with dense retrieval, where the vectors live): sqlite-fts5 (embedded, vectors in the
         * SQL table), postgres (full text in PostgreSQL, vectors with pgvector; needs storage.driver postgres) or
         * meilisearch (passages and vectors in a Meilisearch server). NOTARY_INDEX_BACKEND overrides.
         */
        backend: z.enum(['sqlite-fts5', 'postgres', 'meilisearch']).default('sqlite-fts5'),
        meilisearch: z
          .object({
            url: z.url().optional(),
            /** Master or admin key for crawlers and indexers; the search-only key (`notary index search-key`) for API nodes. */
            api_key: z.string().min(1).optional(),
            index: z.string().regex(/^[A-Za-z0-9_-]{1,200}$/, 'letters, digits, - and _').default('notary_passages'),
            /** How long a write waits for its Meilisearch task. */
            task_timeout_ms: z.number().int().positive().default(60_000),
            request_timeout_ms: z.number().int().positive().default(10_000),
            batch_size: z.number().int().positive().max(10_000).default(1000),
          })
          .prefault({}),
        postgres: z
          .object({
            /**
             * How the postgres backend ranks matches: bm25 (idf from per-term document frequencies the index keeps, as
             * FTS5 ranks) or ts_rank / ts_rank_cd / ts_rank_nonorm (PostgreSQL's, without idf; kept for comparison).
             * NOTARY_POSTGRES_RANKING overrides.
             */
            ranking: z.enum(['bm25', 'ts_rank', 'ts_rank_cd', 'ts_rank_nonorm']).default('bm25'),
          })
          .prefault({}),
        passage_min_words: z.number().int().positive().default(100),
        passage_max_words: z.number().int().positive().default(200),
      })
      .prefault({}),
    reranker: z
      .object({
        /** A model directory (tokenizer.json + an .onnx file); NOTARY_RERANKER_MODEL overrides. */
        model_dir: z.string().optional(),
        /** Where downloaded models are kept; default <data_dir>/models. */
        cache_dir: z.string().optional(),
        /** Try the model hub when no model directory is given. */
        download: z.boolean().default(true),
        /** After a failed download, commands do not try again for this long (a marker file in the cache says until when). */
        download_retry_hours: z.number().min(0).default(6),
        /** The model hub the pinned models come from (`<hub>/<repo>/resolve/<revision>/<path>`); a mirror's URL behind a firewall. NOTARY_HUB_URL overrides. */
        hub_url: z.string().default('https://huggingface.co'),
        /**
         * Worker threads that run each model, each with an ONNX Runtime session of its own (onnxruntime-node blocks
         * the thread that runs a model, so 0 — the calling thread — stalls everything else of that process for the
         * run). Unset: the cores shared among the serving processes, at most 4. NOTARY_MODEL_WORKERS overrides.
         */
        workers: z.number().int().min(0).max(64).optional(),
        /** ONNX Runtime intra-op threads per session; unset: 1 with worker threads, else the cores shared among the serving processes, at most 4. */
        threads: z.number().int().positive().optional(),
        batch_size: z.number().int().positive().default(16),
        max_seq_length: z.number().int().min(16).max(512).default(256),
        /**
         * Let ONNX Runtime's threads busy-wait between operators (its default; faster on a machine of its own). Turn
         * off where the cores are busy with other work: spinning threads then take the working one's time slices.
         */
        spin_wait: z.boolean().default(true),
      })
      .prefault({}),
    embeddings: z
      .object({
        /**
         * Dense retrieval (passage vectors beside the full-text index, fused with BM25 by reciprocal rank fusion):
         * "reranker" uses the reranker's model when it is a bi-encoder, "off" turns it off, anything else names a
         * bi-encoder model directory. NOTARY_EMBEDDING_MODEL overrides.
         */
        model: z.string().min(1).default('reranker'),
        /** Passages embedded per model call by the indexer; they are sorted by length inside a call. */
        batch_size: z.number().int().positive().default(64),
        /**
         * int8: the bi-encoder's dynamically quantised copy (onnx/model_int8.onnx beside the model, or
         * <cache_dir>/<name>-int8, made by scripts/quantize-minilm.sh); fp32: the exact model. Applies to the
         * bi-encoder of dense retrieval, which is also the reranker when the reranker is a bi-encoder.
         */
        precision: z.enum(['int8', 'fp32']).default('int8'),
        /**
         * From this many passage vectors on, vector search asks an HNSW graph (usearch, built in a worker thread) for
         * candidates and rescores them exactly, instead of scanning every vector; 0 = always exact. Below about
         * 50,000 the exact scan is already a few milliseconds. NOTARY_EMBEDDING_ANN_ABOVE overrides.
         */
        ann_above: z.number().int().min(0).default(50_000),
        /**
         * Save the HNSW graph beside the database (`<sqlite file>.hnsw/`; with PostgreSQL `<data_dir>/vector-graphs/`)
         * after each build and after enough changes, and load it at start-up instead of building again (minutes at
         * a million vectors). An in-memory database never saves. NOTARY_EMBEDDING_ANN_PERSIST overrides.
         */
        ann_persist: z.boolean().default(true),
      })
      .prefault({}),
    search: z
      .object({
        // Depth 3 measured no better than depth 2 on either relevance set (README, Relevance): not offered by default.
        max_depth: z.number().int().min(1).max(10).default(2),
        max_query_length: z.number().int().positive().default(512),
        /** Passages taken from the index and scored by the reranker at depth 1. */
        rerank_top_n: z.number().int().min(0).default(30),
        /**
         * With a cross-encoder (NOTARY_RERANKER_MODEL, or the pinned one), searches of this depth or deeper have their
         * rerank_score from it: after the passes (the bi-encoder's), it judges the best cross_encoder_top_n results
         * against the original query. Shallower searches never run it (depth 1 stays a bi-encoder search).
         * NOTARY_CROSS_ENCODER_FROM_DEPTH overrides.
         */
        cross_encoder_from_depth: z
          .number({ error: 'must be a whole number from 1 to 10 (NOTARY_CROSS_ENCODER_FROM_DEPTH)' })
          .int('must be a whole number from 1 to 10 (NOTARY_CROSS_ENCODER_FROM_DEPTH)')
          .min(1, 'must be at least 1: the depth from which the cross-encoder scores (NOTARY_CROSS_ENCODER_FROM_DEPTH)')
          .max(10, 'must be at most 10, the deepest search (NOTARY_CROSS_ENCODER_FROM_DEPTH)')
          .default(2),
        /** Results (each URL's best passage, best first by the passes' ranking) the cross-encoder scores per search. */
        cross_encoder_top_n: z.number().int().min(1).max(200).default(20),
        /**
         * The cross-encoder reads this many words of a passage, the window holding most query words (the title and
         * headings stay in front); 0: the whole passage, cut at reranker.max_seq_length tokens.
         */
        cross_encoder_window_words: z.number().int().min(0).default(60),
        /** (query, passage) cross-encoder scores kept for repeated pairs (least recently used go first); 0 turns it off. */
        cross_encoder_cache: z.number().int().min(0).default(20_000),
        /**
         * The cross-encoder's worker threads run at this nice value (Linux, per thread; 0: as the rest), so the
         * depth-1 searches arriving meanwhile (the bi-encoder, full text) take the cores first: a depth-2 search
         * waits, a depth-1 search does not.
         */
        cross_encoder_nice: z.number().int().min(0).max(19).default(10),
        /**
         * Worker threads of the cross-encoder in each API process (a search's pairs are spread over them); unset: the
         * machine's cores, at most 4, whatever reranker.workers gives the other model (they run at cross_encoder_nice).
         */
        cross_encoder_workers: z.number().int().min(1).max(64).optional(),
        max_results: z.number().int().positive().default(10),
        snippet_chars: z.number().int().positive().default(300),
        /**
         * Query vectors kept for repeated queries (least recently used go first; 384 floats are 1.5 KiB each): a
         * repeated query skips the embedding model. 0 turns it off.
         */
        query_vector_cache: z.number().int().min(0).default(10_000),
        /**
         * Full-text rankings kept for repeated queries by the embedded FTS5 index (passage ids and scores, about 2 KiB
         * each; least recently used go first). Any write to the index, by any process, empties it. 0 turns it off.
         */
        ranking_cache: z.number().int().min(0).default(10_000),
        /**
         * The embedded FTS5 index ranks whole pages on a second, read-only connection in a worker thread, beside the
         * passage query on the main one (two cores for one search).
         */
        parallel_page_ranking: z.boolean().default(true),
        /**
         * From this many passages on, the embedded FTS5 index ranks passages on two read-only connections in worker
         * threads, each over half of the rows (the lists merge into the same ranking), so that the main thread stays
         * free to send the vector search while bm25() runs over every match, and an idle core shares that work (at a
         * million passages the full text is most of a search). 0 = never.
         */
        parallel_passage_ranking_above: z.number().int().min(0).default(100_000),
        /**
         * Up to this many passages, the embedded FTS5 index ranks from a copy of its full-text index held in memory,
         * with bm25 computed as FTS5 computes it (the same rankings): FTS5 reads and scores every matching row in SQL,
         * several times the cost. The copy is made in a worker thread and used only while nothing has been written
         * since (any process); after a write SQL ranks until the next copy is in. About 4 KB of memory a passage in
         * each API process (both tables' token positions: 17.9 MB of arrays plus term strings for the PostgreSQL
         * docs' 7,456 passages, `npm run bench:fts-memory`). 0 = never.
         */
        memory_ranking_up_to: z.number().int().min(0).default(50_000),
        /** Deprecated: pricing.search.credits_by_depth. */
        credits_by_depth: creditsByDepth.optional(),
        /** Generated navigation pages (site indexes, listings, HTML sitemaps) are kept out of results unless this is true. */
        include_navigation_pages: z.boolean().default(false),
        /**
         * Results in this language only (BCP 47, "en"; pages of unknown language too) unless a request names another;
         * null: every language, each page shown in the query's own language when it has that translation.
         */
        default_language: z
          .string()
          .regex(/^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})*$/, 'a BCP 47 language tag such as "en" or "pt-BR"')
          .nullable()
          .default(null),
        /**
         * Optional query rewriter for reflection passes: an OpenAI-compatible chat completions endpoint. Off unless
         * `url` is set (the API's base URL, e.g. https://api.openai.com/v1 or http://127.0.0.1:8080/v1).
         */
        query_rewriter: z
          .object({
            url: z.string().url().optional(),
            model: z.string().min(1).default('gpt-4o-mini'),
            /** Sent as a bearer token; prefer NOTARY_QUERY_REWRITER_API_KEY to a config file. */
            api_key: z.string().optional(),
            timeout_ms: z.number().int().positive().max(60_000).default(3000),
            max_queries: z.number().int().min(1).max(10).default(3),
          })
          .prefault({}),
      })
      .prefault({}),
    receipts: z
      .object({
        /** `issuer` of every signed receipt: the service's public base URL. Default http://<server.host>:<server.port>. */
        issuer: z.string().min(1).optional(),
        /** A keyring file to sign with instead of <data_dir>/receipt-keys.json (which is created at first start); it must exist. */
        key_file: z.string().min(1).optional(),
        /** Origin line (and note key name) of the log's checkpoints; default: the issuer without its scheme, + "/receipt-log". */
        log_origin: z
          .string()
          .regex(/^[^\s+]+$/, 'must be non-empty without spaces or "+"')
          .optional(),
        /** A new checkpoint is signed at most this often while the log grows; 0 signs one whenever it has grown. */
        checkpoint_interval_s: z.number().int().min(0).default(0),
      })
      .prefault({}),
    /**
     * What each call costs, in credits and, for pay-per-call modes, in money. One place: payments/pricing.ts reads it.
     * These are the defaults: an operator's edits in the dashboard are kept in the database and override them.
     */
    pricing: pricingSchema,
    payments: z
      .object({
        modes: z
          .object({
            /** `Authorization: Bearer sk_live_...`: tenants pay from their credit balance. */
            api_key: z.object({ enabled: z.boolean().default(true) }).prefault({}),
            /**
             * `Authorization: MPP envelope=...`: several parties (tenants with registered Ed25519 keys) share one call,
             * each debited its share of the price in one transaction.
             */
            mpp: z
              .object({
                enabled: z.boolean().default(true),
                /** Most parties one envelope may list. */
                max_parties: z.number().int().min(1).max(64).default(16),
                /** Longest accepted envelope lifetime (expires - issued_at, and expires - now); the wire format caps it at 300. */
                max_lifetime_s: z.number().int().min(1).max(300).default(300),
                /** Clock difference tolerated between the parties and this service when checking issued_at and expires. */
                clock_skew_s: z.number().int().min(0).max(120).default(30),
                /**
                 * Origins (scheme://host[:port]) an envelope's htu may name. Empty: any origin, only the path and query
                 * are bound (the service cannot tell its public origin behind a proxy); set it to bind the origin too.
                 */
                origins: z.array(z.url().transform((u) => new URL(u).origin)).default([]),
              })
              .prefault({}),
            /** Pay per call on an EVM chain: x402 v2 (PAYMENT-SIGNATURE) and the interface's X-402-Receipt. */
            x402: x402ModeSchema.prefault({}),
          })
          .prefault({}),
        idempotency: z
          .object({
            /** How long the first response to an Idempotency-Key is kept and replayed. */
            ttl_hours: z.number().positive().max(24 * 30).default(24),
            /**
             * A call still running after this long (a crashed process) no longer blocks a retry with its key with
             * 409; the retry runs instead. Single-use charges (the ledger's unique key) still keep it from paying twice.
             */
            in_progress_timeout_s: z.number().int().positive().default(300),
          })
          .prefault({}),
        /** Rate-limit tier for calls that present no credentials (they get the payment challenges); default default_tier. */
        anonymous_tier: z.string().optional(),
      })
      .prefault({}),
    facilitator: facilitatorSchema.prefault({}),
    tiers: z.record(z.string(), tierSchema).default({
      free: { requests_per_minute: 60, burst: 10, monthly_credits: 0, features: [...FEATURES] },
      pro: { requests_per_minute: 600, burst: 60, monthly_credits: 0, features: [...FEATURES] },
      enterprise: { requests_per_minute: 6000, burst: 600, monthly_credits: 0, features: [...FEATURES] },
    }),
    default_tier: z.string().default('free'),
    /** Accounts and the web dashboard under /dashboard/ (sign-up, sessions, the operator pages and the crawl seeds they steer). */
    dashboard: z
      .object({
        enabled: z.boolean().default(true),
        /** open: anyone who reaches the server can sign up (a new tenant on default_tier); closed: operators only create accounts. */
        signup: z.enum(['open', 'closed']).default('open'),
        /** Free credits granted to a tenant created by sign-up (its opening balance); 0 grants none. */
        signup_credits: z.number().int().min(0).default(100),
        /** Sign-ups from one client address within the window (counted in the database, across nodes); 0: no limit. */
        signup_limit: z
          .object({
            max_per_address: z.number().int().min(0).default(3),
            window_minutes: z.number().int().positive().default(24 * 60),
          })
          .prefault({}),
        /** Secure attribute of the session cookie: auto sets it when the request came over TLS. */
        secure_cookies: z.enum(['auto', 'always', 'never']).default('auto'),
        /** A session ends this long after sign-in, whatever its use. */
        session_hours: z.number().positive().max(24 * 90).default(24 * 7),
        /** A session unused for this long ends. */
        session_idle_hours: z.number().positive().max(24 * 90).default(24),
        password_min_length: z.number().int().min(8).max(128).default(10),
        /** log2 of scrypt's cost N for new password hashes (r 8, p 1); 17 is OWASP's recommendation (128 MiB, ~0.3 s). */
        scrypt_log_n: z.number().int().min(14).max(20).default(17),
        signin: z
          .object({
            /** Failed sign-ins for one email before it is locked out for a while. */
            max_failures: z.number().int().positive().default(5),
            /** First lockout; each further failure doubles it, up to lockout_max_s. */
            lockout_s: z.number().int().positive().default(60),
            lockout_max_s: z.number().int().positive().default(3600),
            /** Failures counted from one client address (any email) before that address is locked out. */
            max_failures_per_address: z.number().int().positive().default(50),
            /** Failures older than this are forgotten. */
            window_minutes: z.number().int().positive().default(15),
          })
          .prefault({}),
        /** How often the serve-time crawl worker looks for seeds that are due or were added (operators add them in the dashboard). */
        seed_poll_s: z.number().positive().max(3600).default(5),
        /** How long a node serves prices and tiers before re-reading the operators' edits from the database. */
        settings_refresh_ms: z.number().int().min(0).max(600_000).default(2000),
      })
      .prefault({}),
  })
  .superRefine((cfg, ctx) => {
    if (!(cfg.default_tier in cfg.tiers)) {
      ctx.addIssue({ code: 'custom', path: ['default_tier'], message: `tier "${cfg.default_tier}" is not defined in tiers` });
    }
    if (cfg.payments.anonymous_tier !== undefined && !(cfg.payments.anonymous_tier in cfg.tiers)) {
      ctx.addIssue({ code: 'custom', path: ['payments', 'anonymous_tier'], message: `tier "${cfg.payments.anonymous_tier}" is not defined in tiers` });
    }
    if (!Object.values(cfg.payments.modes).some((mode) => mode.enabled)) {
      ctx.addIssue({ code: 'custom', path: ['payments', 'modes'], message: 'at least one payment mode must be enabled' });
    }
    const x402 = cfg.payments.modes.x402;
    if (x402.enabled) {
      for (const key of ['pay_to', 'facilitator_url', 'rpc_url'] as const) {
        if (!x402[key]) ctx.addIssue({ code: 'custom', path: ['payments', 'modes', 'x402', key], message: 'required when x402 is enabled' });
      }
    }
    if (x402.tier !== undefined && !(x402.tier in cfg.tiers)) {
      ctx.addIssue({ code: 'custom', path: ['payments', 'modes', 'x402', 'tier'], message: `tier "${x402.tier}" is not defined in tiers` });
    }
    if (cfg.storage.driver === 'postgres' && !cfg.storage.postgres_url) {
      ctx.addIssue({ code: 'custom', path: ['storage', 'postgres_url'], message: 'required when storage.driver is postgres' });
    }
    if (cfg.indexer.backend === 'meilisearch' && !cfg.indexer.meilisearch.url) {
      ctx.addIssue({ code: 'custom', path: ['indexer', 'meilisearch', 'url'], message: 'required when indexer.backend is meilisearch (NOTARY_MEILISEARCH_URL)' });
    }
    if (cfg.indexer.backend === 'postgres' && cfg.storage.driver !== 'postgres') {
      ctx.addIssue({ code: 'custom', path: ['indexer', 'backend'], message: 'postgres needs storage.driver postgres (NOTARY_STORAGE=postgres)' });
    }
    if (cfg.crawler.shared_frontier && cfg.storage.driver !== 'postgres') {
      ctx.addIssue({ code: 'custom', path: ['crawler', 'shared_frontier'], message: 'a shared frontier needs storage.driver postgres (NOTARY_STORAGE=postgres)' });
    }
    if (cfg.stores.backend === 'redis' && !cfg.stores.redis_url) {
      ctx.addIssue({ code: 'custom', path: ['stores', 'redis_url'], message: 'required when stores.backend is redis (NOTARY_REDIS_URL)' });
    }
    if (cfg.server.tls.cert_file !== undefined && cfg.server.tls.key_file === undefined) {
      ctx.addIssue({ code: 'custom', path: ['server', 'tls', 'key_file'], message: 'required with server.tls.cert_file' });
    }
    if (cfg.indexer.passage_min_words > cfg.indexer.passage_max_words) {
      ctx.addIssue({ code: 'custom', path: ['indexer', 'passage_min_words'], message: 'must not exceed passage_max_words' });
    }
  });

export type NotaryConfig = z.infer<typeof configSchema>;
export type ConfigInput = z.input<typeof configSchema>;

type Env = Record<string, string | undefined>;

/** Environment variables that map onto config paths; documented in the README's configuration reference. */
export const envBindings: ReadonlyArray<{ env: string; path: string[]; kind: 'string' | 'int' | 'bool' | 'list' }> = [
  { env: 'NOTARY_DATA_DIR', path: ['data_dir'], kind: 'string' },
  { env: 'NOTARY_LOG_LEVEL', path: ['log_level'], kind: 'string' },
  { env: 'NOTARY_HOST', path: ['server', 'host'], kind: 'string' },
  { env: 'NOTARY_PORT', path: ['server', 'port'], kind: 'int' },
  { env: 'NOTARY_SERVER_WORKERS', path: ['server', 'workers'], kind: 'int' },
  { env: 'NOTARY_CRAWL_ON_START', path: ['server', 'crawl_on_start'], kind: 'bool' },
  { env: 'NOTARY_START_WAIT_MS', path: ['server', 'start_wait_ms'], kind: 'int' },
  { env: 'NOTARY_STORAGE', path: ['storage', 'driver'], kind: 'string' },
  { env: 'NOTARY_DATABASE_URL', path: ['storage', 'postgres_url'], kind: 'string' },
  { env: 'NOTARY_SEEDS', path: ['crawler', 'seeds'], kind: 'list' },
  { env: 'NOTARY_USER_AGENT', path: ['crawler', 'user_agent'], kind: 'string' },
  { env: 'NOTARY_CONTACT_URL', path: ['crawler', 'contact_url'], kind: 'string' },
  { env: 'NOTARY_CRAWL_DELAY_MS', path: ['crawler', 'per_host_delay_ms'], kind: 'int' },
  { env: 'NOTARY_CRAWL_SHARED_FRONTIER', path: ['crawler', 'shared_frontier'], kind: 'bool' },
  { env: 'NOTARY_CRAWL_LEASE_SECONDS', path: ['crawler', 'lease_seconds'], kind: 'int' },
  { env: 'NOTARY_ALLOW_PRIVATE_NETWORKS', path: ['extract', 'allow_private_networks'], kind: 'bool' },
  { env: 'NOTARY_ALLOWED_PRIVATE_RANGES', path: ['extract', 'allowed_private_ranges'], kind: 'list' },
  { env: 'NOTARY_EXTRACT_RESPECT_ROBOTS', path: ['extract', 'respect_robots_txt'], kind: 'bool' },
  { env: 'NOTARY_EXTRACT_MAX_BYTES', path: ['extract', 'max_bytes'], kind: 'int' },
  { env: 'NOTARY_EXTRACT_TIMEOUT_MS', path: ['extract', 'total_timeout_ms'], kind: 'int' },
  { env: 'NOTARY_EXTRACT_CACHE_TTL_S', path: ['extract', 'cache_ttl_s'], kind: 'int' },
  { env: 'NOTARY_EXTRACT_RENDER', path: ['extract', 'render'], kind: 'string' },
  { env: 'NOTARY_RERANKER_MODEL', path: ['reranker', 'model_dir'], kind: 'string' },
  { env: 'NOTARY_MODEL_CACHE_DIR', path: ['reranker', 'cache_dir'], kind: 'string' },
  { env: 'NOTARY_MODEL_DOWNLOAD', path: ['reranker', 'download'], kind: 'bool' },
  { env: 'NOTARY_MODEL_WORKERS', path: ['reranker', 'workers'], kind: 'int' },
  { env: 'NOTARY_HUB_URL', path: ['reranker', 'hub_url'], kind: 'string' },
  { env: 'NOTARY_RERANK_TOP_N', path: ['search', 'rerank_top_n'], kind: 'int' },
  { env: 'NOTARY_CROSS_ENCODER_FROM_DEPTH', path: ['search', 'cross_encoder_from_depth'], kind: 'int' },
  { env: 'NOTARY_DEFAULT_LANGUAGE', path: ['search', 'default_language'], kind: 'string' },
  { env: 'NOTARY_INCLUDE_NAVIGATION_PAGES', path: ['search', 'include_navigation_pages'], kind: 'bool' },
  { env: 'NOTARY_EMBEDDING_MODEL', path: ['embeddings', 'model'], kind: 'string' },
  { env: 'NOTARY_EMBEDDING_PRECISION', path: ['embeddings', 'precision'], kind: 'string' },
  { env: 'NOTARY_EMBEDDING_ANN_ABOVE', path: ['embeddings', 'ann_above'], kind: 'int' },
  { env: 'NOTARY_EMBEDDING_ANN_PERSIST', path: ['embeddings', 'ann_persist'], kind: 'bool' },
  { env: 'NOTARY_QUERY_REWRITER_URL', path: ['search', 'query_rewriter', 'url'], kind: 'string' },
  { env: 'NOTARY_QUERY_REWRITER_MODEL', path: ['search', 'query_rewriter', 'model'], kind: 'string' },
  { env: 'NOTARY_QUERY_REWRITER_API_KEY', path: ['search', 'query_rewriter', 'api_key'], kind: 'string' },
  { env: 'NOTARY_DASHBOARD_SIGNUP', path: ['dashboard', 'signup'], kind: 'string' },
  { env: 'NOTARY_DASHBOARD_SIGNUP_CREDITS', path: ['dashboard', 'signup_credits'], kind: 'int' },
  { env: 'NOTARY_DASHBOARD_SIGNUPS_PER_ADDRESS', path: ['dashboard', 'signup_limit', 'max_per_address'], kind: 'int' },
  { env: 'NOTARY_SECURE_COOKIES', path: ['dashboard', 'secure_cookies'], kind: 'string' },
  { env: 'NOTARY_X402_CHALLENGE_SECRET', path: ['payments', 'modes', 'x402', 'challenge_secret'], kind: 'string' },
  { env: 'NOTARY_FACILITATOR_RPC_URL', path: ['facilitator', 'rpc_url'], kind: 'string' },
  { env: 'NOTARY_FACILITATOR_PRIVATE_KEY', path: ['facilitator', 'private_key'], kind: 'string' },
  { env: 'NOTARY_RECEIPTS_ISSUER', path: ['receipts', 'issuer'], kind: 'string' },
  { env: 'NOTARY_RECEIPTS_KEY_FILE', path: ['receipts', 'key_file'], kind: 'string' },
  { env: 'NOTARY_INDEX_BACKEND', path: ['indexer', 'backend'], kind: 'string' },
  { env: 'NOTARY_MEILISEARCH_URL', path: ['indexer', 'meilisearch', 'url'], kind: 'string' },
  { env: 'NOTARY_MEILISEARCH_API_KEY', path: ['indexer', 'meilisearch', 'api_key'], kind: 'string' },
  { env: 'NOTARY_MEILISEARCH_INDEX', path: ['indexer', 'meilisearch', 'index'], kind: 'string' },
  { env: 'NOTARY_POSTGRES_RANKING', path: ['indexer', 'postgres', 'ranking'], kind: 'string' },
  { env: 'NOTARY_STORES', path: ['stores', 'backend'], kind: 'string' },
  { env: 'NOTARY_REDIS_URL', path: ['stores', 'redis_url'], kind: 'string' },
  { env: 'NOTARY_TLS_CERT_FILE', path: ['server', 'tls', 'cert_file'], kind: 'string' },
  { env: 'NOTARY_TLS_KEY_FILE', path: ['server', 'tls', 'key_file'], kind: 'string' },
  { env: 'NOTARY_TRUSTED_PROXIES', path: ['server', 'trusted_proxies'], kind: 'list' },
  { env: 'NOTARY_METRICS_TOKEN', path: ['server', 'metrics_token'], kind: 'string' },
];

function setPath(target: Record<string, unknown>, keys: string[], value: unknown): void {
  let node = target;
  for (const key of keys.slice(0, -1)) {
    const next = node[key];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  const last = keys[keys.length - 1];
  if (last !== undefined) node[last] = value;
}

function parseEnvValue(name: string, raw: string, kind: 'string' | 'int' | 'bool' | 'list'): unknown {
  switch (kind) {
    case 'string':
      return raw;
    case 'int': {
      if (!/^-?\d+$/.test(raw.trim())) throw new NotaryError('invalid_config', `${name} must be an integer, got "${raw}"`);
      return Number(raw);
    }
    case 'bool': {
      const v = raw.trim().toLowerCase();
      if (['1', 'true', 'yes', 'on'].includes(v)) return true;
      if (['0', 'false', 'no', 'off', ''].includes(v)) return false;
      throw new NotaryError('invalid_config', `${name} must be true or false, got "${raw}"`);
    }
    case 'list':
      return raw.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
  }
}

/** Objects merged key by key, `over` winning; arrays and other values replaced whole. */
export function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const prev = out[key];
    if (value && typeof value === 'object' && !Array.isArray(value) && prev && typeof prev === 'object' && !Array.isArray(prev)) {
      out[key] = deepMerge(prev as Record<string, unknown>, value as Record<string, unknown>);
    } else {
      out[key] = value;
    }
  }
  return out;
}

export interface LoadConfigOptions {
  env?: Env;
  /** Where deprecation warnings go; default: standard error. */
  warn?: (message: string) => void;
  /** Explicit config file; otherwise NOTARY_CONFIG, otherwise <data_dir>/notary.json when it exists. */
  file?: string;
  /** Highest-precedence values, e.g. from CLI flags. */
  overrides?: ConfigInput;
}

function formatIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `  - ${issue.path.join('.') || '(root)'}: ${issue.message}`).join('\n');
}

/**
 * Reads defaults < config file < environment < overrides, validates once, and resolves paths against the
 * working directory. Throws NotaryError('invalid_config') with every problem listed.
 */
export function loadConfig(options: LoadConfigOptions = {}): NotaryConfig {
  const env = options.env ?? process.env;
  const fromEnv: Record<string, unknown> = {};
  for (const binding of envBindings) {
    const raw = env[binding.env];
    if (raw !== undefined) setPath(fromEnv, binding.path, parseEnvValue(binding.env, raw, binding.kind));
  }
  const overrides = (options.overrides ?? {}) as Record<string, unknown>;
  const dataDir = (overrides['data_dir'] as string | undefined) ?? (fromEnv['data_dir'] as string | undefined) ?? './data';
  const explicitFile = options.file ?? env['NOTARY_CONFIG'];
  const file = explicitFile ?? path.join(dataDir, 'notary.json');
  let fromFile: Record<string, unknown> = {};
  if (existsSync(file)) {
    try {
      const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('top level must be an object');
      fromFile = parsed as Record<string, unknown>;
    } catch (err) {
      throw new NotaryError('invalid_config', `config file ${file}: ${(err as Error).message}`);
    }
  } else if (explicitFile) {
    throw new NotaryError('invalid_config', `config file ${explicitFile} does not exist`);
  }
  const merged = deepMerge(deepMerge(fromFile, fromEnv), overrides);
  const result = configSchema.safeParse(merged);
  if (!result.success) {
    throw new NotaryError('invalid_config', `invalid configuration:\n${formatIssues(result.error)}`);
  }
  const cfg = result.data;
  applyDeprecatedKeys(cfg, merged, options.warn ?? ((message) => process.stderr.write(`WARNING: ${message}\n`)));
  cfg.data_dir = path.resolve(cfg.data_dir);
  if (cfg.reranker.model_dir) cfg.reranker.model_dir = path.resolve(cfg.reranker.model_dir);
  cfg.reranker.cache_dir = path.resolve(cfg.reranker.cache_dir ?? path.join(cfg.data_dir, 'models'));
  if (cfg.receipts.key_file) cfg.receipts.key_file = path.resolve(cfg.receipts.key_file);
  return cfg;
}

function hasPath(input: Record<string, unknown>, keys: readonly string[]): boolean {
  let node: unknown = input;
  for (const key of keys) {
    if (typeof node !== 'object' || node === null || Array.isArray(node) || !(key in node)) return false;
    node = (node as Record<string, unknown>)[key];
  }
  return node !== undefined;
}

/** Keys of earlier releases that are still read: each is copied to its new place unless that is set too. */
const DEPRECATED_KEYS: ReadonlyArray<{ from: readonly string[]; to: readonly string[] }> = [
  { from: ['search', 'credits_by_depth'], to: ['pricing', 'search', 'credits_by_depth'] },
  { from: ['extract', 'credits'], to: ['pricing', 'extract', 'credits'] },
  { from: ['extract', 'credits_rendered'], to: ['pricing', 'extract', 'credits_rendered'] },
];

function applyDeprecatedKeys(cfg: NotaryConfig, input: Record<string, unknown>, warn: (message: string) => void): void {
  const target = cfg as unknown as Record<string, unknown>;
  for (const { from, to } of DEPRECATED_KEYS) {
    if (!hasPath(input, from)) continue;
    if (hasPath(input, to)) {
      warn(`config key ${from.join('.')} is deprecated and ignored: ${to.join('.')} is set`);
      continue;
    }
    warn(`config key ${from.join('.')} is deprecated: use ${to.join('.')} (read this time)`);
    const value = from.reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], target);
    setPath(target, [...to], value);
  }
}

/** Processes `notary serve` answers requests with (server.workers; 0 = one per core). */
export function serveWorkers(cfg: NotaryConfig): number {
  return cfg.server.workers > 0 ? cfg.server.workers : availableParallelism();
}

/**
 * How a model runs: `workers` worker threads (0 = the calling thread) of `threads` ONNX Runtime intra-op threads each.
 * Unset, this machine's cores shared by `processes` (1..4) become worker threads of one intra-op thread each: on
 * these CPUs two single-threaded int8 sessions side by side embedded 1.21x as many passages as one session with two
 * threads (README, Embedding speed), and the event loop stays free while the model runs.
 */
export function modelRunners(reranker: NotaryConfig['reranker'], processes = 1): { workers: number; threads: number } {
  const share = Math.min(4, Math.max(1, Math.floor(availableParallelism() / Math.max(1, processes))));
  const workers = reranker.workers ?? share;
  return { workers, threads: reranker.threads ?? (workers > 0 ? 1 : share) };
}
