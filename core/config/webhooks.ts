import { z } from 'zod';

/** Webhooks that crawl jobs call (webhooks/): signed per Standard Webhooks, retried with backoff from an SQL outbox. */
export const webhooksSection = z
  .object({
    /** One delivery attempt: DNS, connect, the request and the answer's headers and body. */
    timeout_ms: z.number().int().positive().max(120_000).default(10_000),
    /** Attempts of one message, the first included (the schedule: at once, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h...). */
    max_attempts: z.number().int().min(1).max(50).default(8),
    /**
     * Webhook URLs are tenant-supplied: by default one resolving to loopback, RFC 1918, unique-local or CGNAT
     * addresses is refused at registration and at every delivery. Link-local and metadata addresses stay refused.
     */
    allow_private_networks: z.boolean().default(false),
    /**
     * How often `notary serve` (its background process) and `notary crawl-worker` look for due messages and post
     * them: the delay before a first attempt, at most.
     */
    deliver_every_ms: z.number().int().min(100).max(600_000).default(1_000),
  })
  .prefault({});
