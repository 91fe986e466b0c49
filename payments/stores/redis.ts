import { Redis } from 'ioredis';
import { NotaryError } from '../../core/index.js';
import { gcra, type RateLimitDecision, type RateLimitStore, type RateLimitTier } from '../rate-limit.js';
import type { IdempotencyBegin, IdempotencyBeginInput, IdempotencyLease, IdempotencyStore, StoredResponse } from './idempotency.js';

/** Redis records outlive their logical expiry by this much, so a clock step between nodes cannot drop one early. */
const SLACK_MS = 3_600_000;

/** A Redis connection for the shared stores; commands fail fast (no offline queue) so a dead Redis is a 503, not a hang. */
export function openRedis(url: string): Redis {
  const client = new Redis(url, { enableOfflineQueue: true, maxRetriesPerRequest: 1, connectTimeout: 5_000, commandTimeout: 5_000, lazyConnect: false });
  // Errors surface on the commands; an unhandled 'error' event would crash the process.
  client.on('error', () => {});
  return client;
}

async function guarded<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof NotaryError) throw err;
    throw new NotaryError('store_unavailable', `Redis ${what} failed: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * GCRA in one Lua script, so a key's check-and-set is atomic across every API node. The clock is Redis's own (TIME),
 * one clock for all nodes. The script stores the new theoretical arrival time only when the request is allowed (the
 * same rule as `gcra`) and returns the time and the previous TAT, from which `gcra` gives the exact decision.
 */
const GCRA_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local stored = redis.call('GET', KEYS[1])
local tat = nil
if stored then tat = tonumber(stored) end
local base = now
if tat and tat > now then base = tat end
local newTat = base + interval
if (newTat - interval * burst) - now > 0.001 then
  return {'0', string.format('%.6f', now), stored or ''}
end
redis.call('SET', KEYS[1], string.format('%.6f', newTat), 'PX', math.ceil(newTat - now) + 1000)
return {'1', string.format('%.6f', now), stored or ''}
`;

export class RedisRateLimitStore implements RateLimitStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'notary:',
  ) {
    redis.defineCommand('notaryGcra', { numberOfKeys: 1, lua: GCRA_SCRIPT });
  }

  async consume(key: string, tier: RateLimitTier): Promise<RateLimitDecision> {
    gcra(0, undefined, tier); // validates the tier before any round trip
    const interval = 60_000 / tier.requests_per_minute;
    const [, nowText, tatText] = await guarded('rate limit', async () => {
      const run = (this.redis as unknown as { notaryGcra(key: string, interval: string, burst: string): Promise<[string, string, string]> }).notaryGcra;
      return run.call(this.redis, `${this.prefix}rl:${key}`, String(interval), String(tier.burst));
    });
    return gcra(Number(nowText), tatText === '' ? undefined : Number(tatText), tier).decision;
  }
}

const BEGIN_SCRIPT = `
local now = tonumber(ARGV[4])
local rec = redis.call('HMGET', KEYS[1], 'fingerprint', 'expires_at', 'body', 'status', 'headers')
if (not rec[1]) or tonumber(rec[2]) <= now then
  redis.call('DEL', KEYS[1])
  redis.call('HSET', KEYS[1], 'fingerprint', ARGV[1], 'lease', ARGV[2], 'expires_at', ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
  return {'started'}
end
if rec[1] ~= ARGV[1] then return {'mismatch'} end
if not rec[3] then return {'in_progress'} end
return {'replay', rec[4], rec[5], rec[3]}
`;

const COMPLETE_SCRIPT = `
local rec = redis.call('HMGET', KEYS[1], 'lease', 'body')
if rec[1] ~= ARGV[1] or rec[2] then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'headers', ARGV[3], 'body', ARGV[4], 'expires_at', ARGV[5])
redis.call('PEXPIRE', KEYS[1], ARGV[6])
return 1
`;

const ABANDON_SCRIPT = `
local rec = redis.call('HMGET', KEYS[1], 'lease', 'body')
if rec[1] ~= ARGV[1] or rec[2] then return 0 end
redis.call('DEL', KEYS[1])
return 1
`;

type Scripts = {
  notaryIdemBegin(key: string, fingerprint: string, lease: string, expiresAt: string, now: string, ttl: string): Promise<string[]>;
  notaryIdemComplete(key: string, lease: string, status: string, headers: string, body: string, expiresAt: string, ttl: string): Promise<number>;
  notaryIdemAbandon(key: string, lease: string): Promise<number>;
};

/**
 * Idempotency records in Redis, one hash per payer and key, each operation one Lua script (atomic): of concurrent
 * first requests exactly one starts; an expired record (a dead call's lease, an ended replay window) is taken over.
 * Expiry follows the `now` the caller passes, as in the other stores; Redis drops a record an hour after it.
 */
export class RedisIdempotencyStore implements IdempotencyStore {
  private readonly scripts: Scripts;

  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'notary:',
  ) {
    redis.defineCommand('notaryIdemBegin', { numberOfKeys: 1, lua: BEGIN_SCRIPT });
    redis.defineCommand('notaryIdemComplete', { numberOfKeys: 1, lua: COMPLETE_SCRIPT });
    redis.defineCommand('notaryIdemAbandon', { numberOfKeys: 1, lua: ABANDON_SCRIPT });
    this.scripts = redis as unknown as Scripts;
  }

  private key(scope: string, key: string): string {
    return `${this.prefix}idem:${scope.length}:${scope}:${key}`;
  }

  async begin(input: IdempotencyBeginInput): Promise<IdempotencyBegin> {
    const reply = await guarded('idempotency', () =>
      this.scripts.notaryIdemBegin(
        this.key(input.scope, input.key),
        input.fingerprint,
        input.requestId,
        String(input.now + input.leaseMs),
        String(input.now),
        String(input.leaseMs + SLACK_MS),
      ),
    );
    switch (reply[0]) {
      case 'started':
        return { state: 'started', lease: input.requestId };
      case 'mismatch':
        return { state: 'mismatch' };
      case 'in_progress':
        return { state: 'in_progress' };
      default: {
        const response: StoredResponse = { status: Number(reply[1]), headers: JSON.parse(reply[2] ?? '{}') as Record<string, string>, body: reply[3] ?? '' };
        return { state: 'replay', response };
      }
    }
  }

  async complete(lease: IdempotencyLease, response: StoredResponse, expiresAt: number): Promise<void> {
    const ttl = Math.max(0, expiresAt - Date.now()) + SLACK_MS;
    await guarded('idempotency', () =>
      this.scripts.notaryIdemComplete(this.key(lease.scope, lease.key), lease.lease, String(response.status), JSON.stringify(response.headers), response.body, String(expiresAt), String(Math.ceil(ttl))),
    );
  }

  async abandon(lease: IdempotencyLease): Promise<void> {
    await guarded('idempotency', () => this.scripts.notaryIdemAbandon(this.key(lease.scope, lease.key), lease.lease));
  }
}
