import { z } from 'zod';
import { creditsByDepth } from './pricing.js';

/** The shared settings of the indexer; each index backend's own section (`indexer.<name>`) comes from its plug-in. */
export const indexerShape = {
  /**
   * The passage index (and, with dense retrieval, where the vectors live): one of the registered index backends
   * (indexer/backends/plugins.ts; the first registered is the default). NOTARY_INDEX_BACKEND overrides.
   */
  backend: z.string().default(''),
  passage_min_words: z.number().int().positive().default(100),
  passage_max_words: z.number().int().positive().default(200),
  /** Index the reader comments after an article too (default false: the article alone, as /v1/extract answers). */
  include_comments: z.boolean().default(false),
};

export const indexerSection = z.object(indexerShape).prefault({});

export const rerankerSection = z
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
  .prefault({});

export const embeddingsSection = z
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
     * <cache_dir>/<name>-int8, made there in TypeScript when missing); fp32: the exact model. Applies to the
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
  .prefault({});

export const searchSection = z
  .object({
    // Depth 3 measured no better than depth 2 on either relevance set (docs/relevance.md): not offered by default.
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
    /**
     * Tokens of a (query, passage) pair the cross-encoder reads at most, special tokens included: the title and
     * headings take at most half of what the query leaves, the query-centred window the rest (at least 24 tokens
     * of passage whatever the query); 0: no limit but cross_encoder_window_words and reranker.max_seq_length.
     * Its cost is linear in these tokens (docs/models.md, Cross-encoder speed).
     */
    cross_encoder_pair_tokens: z.number().int().min(0).max(512).default(64),
    /**
     * A depth-2 search's pairs wait at most this long (ms) for those of concurrent searches, to go in one model
     * call of at most cross_encoder_batch_pairs pairs; 0: each search calls the model alone.
     */
    cross_encoder_batch_wait_ms: z.number().min(0).max(50).default(0),
    cross_encoder_batch_pairs: z.number().int().min(1).max(1000).default(64),
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
    /** The most results a request may ask for (`max_results` in POST /v1/search); never below max_results. */
    max_results_cap: z.number().int().positive().default(50),
    snippet_chars: z.number().int().positive().default(300),
    /**
     * Query vectors kept for repeated queries (least recently used go first; 384 floats are 1.5 KiB each): a
     * repeated query skips the embedding model. 0 turns it off.
     */
    query_vector_cache: z.number().int().min(0).default(10_000),
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
  .prefault({});
