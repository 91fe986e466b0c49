import { z } from 'zod';
import type { ConfigFragment } from '../../../core/index.js';

/**
 * `payments.modes.mpp` (`Authorization: MPP envelope=...`): several parties (tenants with registered Ed25519 keys)
 * share one call, each debited its share of the price in one transaction.
 */
export const mppModeSchema = z
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
  .prefault({});

export type MppSettings = z.infer<typeof mppModeSchema>;

export const mppConfigFragment: ConfigFragment<MppSettings> = { path: ['payments', 'modes', 'mpp'], schema: mppModeSchema };
