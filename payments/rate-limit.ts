export interface RateLimitTier {
  /** Sustained rate: one request is replenished every 60000 / requests_per_minute ms. */
  requests_per_minute: number;
  /** Requests allowed at once from a full bucket. */
  burst: number;
}

export interface RateLimitDecision {
  allowed: boolean;
  /** The burst size. */
  limit: number;
  /** Requests still allowed at once after this one. */
  remaining: number;
  /** Milliseconds until the bucket is full again. */
  resetMs: number;
  /** Milliseconds to wait before a retry can succeed; 0 when allowed. */
  retryAfterMs: number;
  /** Quota and window for the IETF RateLimit-Policy header, e.g. `q=10;w=10` (window in seconds). */
  policy: string;
}

/** Per-key rate limiting. In-process for one node; a shared store (Redis) passes the same contract suite. */
export interface RateLimitStore {
  consume(key: string, tier: RateLimitTier): Promise<RateLimitDecision>;
}

export function emissionIntervalMs(tier: RateLimitTier): number {
  return 60_000 / tier.requests_per_minute;
}

/** `q=<burst>;w=<seconds to refill a full burst>`. */
export function policyFor(tier: RateLimitTier): string {
  const windowSeconds = Math.max(1, Math.ceil((tier.burst * emissionIntervalMs(tier)) / 1000));
  return `q=${tier.burst};w=${windowSeconds}`;
}

/** Float slack: TATs are sums of fractional intervals on ~1.7e12 ms timestamps, so exact ties can miss by ulps. */
export const EPSILON_MS = 0.001;

function checkTier(tier: RateLimitTier): void {
  if (!(tier.requests_per_minute > 0) || !Number.isInteger(tier.burst) || tier.burst < 1) {
    throw new RangeError(`invalid rate limit tier: ${JSON.stringify(tier)}`);
  }
}

/**
 * One GCRA step. `tat` is the key's theoretical arrival time (undefined for an unseen key). Returns the decision
 * and the new TAT to store (unchanged when denied). Shared by the in-memory store and usable as the reference for
 * a scripted Redis implementation.
 */
export function gcra(now: number, tat: number | undefined, tier: RateLimitTier): { decision: RateLimitDecision; tat: number } {
  checkTier(tier);
  const interval = emissionIntervalMs(tier);
  const capacity = interval * tier.burst;
  const base = Math.max(tat ?? now, now);
  const newTat = base + interval;
  const allowAt = newTat - capacity;
  const policy = policyFor(tier);
  if (allowAt - now > EPSILON_MS) {
    return {
      decision: {
        allowed: false,
        limit: tier.burst,
        remaining: 0,
        resetMs: Math.ceil(base - now),
        retryAfterMs: Math.max(1, Math.ceil(allowAt - now)),
        policy,
      },
      tat: base,
    };
  }
  return { decision: allowedDecision(now, newTat, tier), tat: newTat };
}

/** The decision of an allowed call whose step moved the key's TAT to `newTat` (gcra's, for stores that step elsewhere). */
export function allowedDecision(now: number, newTat: number, tier: RateLimitTier): RateLimitDecision {
  const interval = emissionIntervalMs(tier);
  const capacity = interval * tier.burst;
  return {
    allowed: true,
    limit: tier.burst,
    remaining: Math.max(0, Math.floor((capacity - (newTat - now) + EPSILON_MS) / interval)),
    resetMs: Math.ceil(newTat - now),
    retryAfterMs: 0,
    policy: policyFor(tier),
  };
}

export interface MemoryRateLimitStoreOptions {
  /** Clock in milliseconds; injectable for tests. */
  now?: () => number;
  /** Sweep replenished keys once the map holds this many entries. Default 10,000. */
  sweepThreshold?: number;
}

/** GCRA in process memory: exact, O(1) per call, one number per active key. */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly tats = new Map<string, number>();
  private readonly now: () => number;
  private readonly sweepThreshold: number;

  constructor(options: MemoryRateLimitStoreOptions = {}) {
    this.now = options.now ?? (() => Date.now());
    this.sweepThreshold = options.sweepThreshold ?? 10_000;
  }

  async consume(key: string, tier: RateLimitTier): Promise<RateLimitDecision> {
    const now = this.now();
    const step = gcra(now, this.tats.get(key), tier);
    this.tats.set(key, step.tat);
    if (this.tats.size > this.sweepThreshold) this.sweep(now);
    return step.decision;
  }

  /** Number of keys currently tracked (a key is forgotten once its bucket is full again). */
  get size(): number {
    return this.tats.size;
  }

  private sweep(now: number): void {
    for (const [key, tat] of this.tats) if (tat <= now) this.tats.delete(key);
  }
}

/** Tier names go inside a structured-field string; anything outside a safe alphabet is replaced. */
function policyName(tier: string): string {
  return /^[A-Za-z0-9_.-]{1,64}$/.test(tier) ? tier : 'default';
}

/** The IETF RateLimit-Policy and RateLimit headers of a decision (seconds). */
export function rateLimitHeaders(tierName: string, decision: RateLimitDecision): Record<string, string> {
  const name = policyName(tierName);
  return {
    'RateLimit-Policy': `"${name}";${decision.policy}`,
    RateLimit: `"${name}";r=${decision.remaining};t=${Math.ceil(decision.resetMs / 1000)}`,
  };
}
