import { z } from 'zod';

export const serverSection = z
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
     * How long a start waits for PostgreSQL, Redis and the index backend's server to answer (retrying each second)
     * before it gives up with one line naming the setting to fix. NOTARY_START_WAIT_MS overrides.
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
  .prefault({});

/** Shared stores of a scaled-out deployment: rate limits and idempotency records (memory/SQL, or Redis). */
export const storesSection = z
  .object({
    /** memory: rate limits in process (one node), idempotency in the database; redis: both in Redis, shared by every node. */
    backend: z.enum(['memory', 'redis']).default('memory'),
    redis_url: z.string().optional(),
    /** Key prefix, so one Redis can serve several deployments. */
    redis_prefix: z.string().min(1).default('notary:'),
  })
  .prefault({});

export const storageSection = z
  .object({
    driver: z.enum(['sqlite', 'postgres']).default('sqlite'),
    /** PostgreSQL connection string when driver is postgres. */
    postgres_url: z.string().optional(),
    /** How long one connection attempt to PostgreSQL may take before it counts as failed. */
    connect_timeout_ms: z.number().int().positive().default(5_000),
  })
  .prefault({});
