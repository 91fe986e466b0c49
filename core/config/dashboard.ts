import { z } from 'zod';

/** Accounts and the web dashboard under /dashboard/ (sign-up, sessions, the operator pages and the crawl seeds they steer). */
export const dashboardSection = z
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
  .prefault({});
