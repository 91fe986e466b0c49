import { z } from 'zod';

/** What a tenant's keys may call: searches, reflection (depth 2 and up), extraction, rendered extraction, test keys, site maps, crawl jobs. */
export const FEATURES = ['search', 'search_reflection', 'extract', 'extract_render', 'test_keys', 'map', 'crawl'] as const;
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
  /** Crawl jobs (POST /v1/crawl) a payer may have queued or running at once. */
  crawl_concurrent_jobs: z.number().int().min(0).max(1_000_000).default(1),
  /** The largest max_pages of one crawl job. */
  crawl_pages_per_job: z.number().int().min(1).max(10_000_000).default(100),
  /** Pages a payer's crawl jobs may take per UTC day: what running jobs may still store plus what ended jobs stored. */
  crawl_pages_per_day: z.number().int().min(0).max(1_000_000_000).default(500),
});

/** Tier names: safe in URLs, headers (RateLimit-Policy) and the dashboard. */
export const TIER_NAME = /^[a-z0-9][a-z0-9_-]{0,31}$/;

/** A non-negative decimal written as a string, parsed exactly later (never as a float): "0.001", "2", "12.5". */
export const DECIMAL_PATTERN = /^(0|[1-9]\d*)(\.\d+)?$/;

export const creditsByDepth = z.array(z.number().int().min(0)).min(1);

/** The price list: credits by call, and the money price of a credit for pay-per-call modes. */
export const pricingSchema = z
  .object({
    search: z
      .object({
        /**
         * Credits per call by depth: index 0 is depth 1. Depths past the end cost the last entry. Depth 2 costs what
         * depth 1 does: measured on 2026-11-23 it is not significantly better on any set (docs/relevance.md).
         */
        credits_by_depth: creditsByDepth.default([1, 1, 2]),
        /**
         * Credits added to a search whose rerank_score comes from the cross-encoder (from
         * search.cross_encoder_from_depth on, when one is loaded). It scores the best search.cross_encoder_top_n
         * passages of every such search, once whatever the depth: measured on 2026-11-27 on 2 cores, a depth-2 search
         * with it costs about 42 depth-1 searches (80.6 against 1.93 searches/s at 10 connections; docs/payments.md).
         */
        cross_encoder_credits: z.number().int().min(0).max(1_000_000).default(40),
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
    /** POST /v1/map: one page of a site's URLs. */
    map: z.object({ credits: z.number().int().min(0).default(1) }).prefault({}),
    crawl: z
      .object({
        /** A page a crawl job (POST /v1/crawl) stored; a job is quoted at max_pages and charged for the pages it stored. */
        credits_per_page: z.number().int().min(0).default(1),
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

export const tiersSchema = z.record(z.string(), tierSchema).default({
  free: { requests_per_minute: 60, burst: 10, monthly_credits: 0, features: [...FEATURES], crawl_concurrent_jobs: 1, crawl_pages_per_job: 100, crawl_pages_per_day: 500 },
  pro: { requests_per_minute: 600, burst: 60, monthly_credits: 0, features: [...FEATURES], crawl_concurrent_jobs: 3, crawl_pages_per_job: 1000, crawl_pages_per_day: 10_000 },
  enterprise: {
    requests_per_minute: 6000,
    burst: 600,
    monthly_credits: 0,
    features: [...FEATURES],
    crawl_concurrent_jobs: 10,
    crawl_pages_per_job: 10_000,
    crawl_pages_per_day: 100_000,
  },
});

/** The payments settings every mode shares; each mode adds its own section under `modes` (its plug-in's fragment). */
export const paymentsSection = z.object({
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
});
