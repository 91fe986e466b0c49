import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest, openPostgres, openSqlite, type Storage } from '../../storage/db.js';
import { createDatabase, startPostgres, type TestPostgres } from '../../testkit/postgres.js';
import { redisAvailable, startRedis, type TestRedis } from '../../testkit/redis.js';
import { describeRateLimitStoreContract } from '../rate-limit.contract.js';
import { gcra, MemoryRateLimitStore } from '../rate-limit.js';
import { describeIdempotencyStoreContract } from './idempotency.contract.js';
import { openRedis, RedisIdempotencyStore, RedisRateLimitStore } from './redis.js';
import { SqlRateLimitStore } from './sql-rate-limit.js';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const runRedis = redisAvailable();
let redis: TestRedis | undefined;
let pg: TestPostgres;
const dir = mkdtempSync(path.join(tmpdir(), 'notary-stores-'));
beforeAll(async () => {
  if (runRedis) redis = await startRedis();
  pg = await startPostgres();
}, 120_000);
afterAll(async () => {
  await redis?.stop();
  pg?.stop();
  rmSync(dir, { recursive: true, force: true });
});

let counter = 0;
async function sqlStorage(kind: 'sqlite' | 'postgres'): Promise<Storage> {
  const storage = kind === 'sqlite' ? openSqlite(path.join(dir, `stores-${counter++}.sqlite`)) : openPostgres(await createDatabase(pg.url, `stores_${process.pid}_${counter++}`));
  await migrateToLatest(storage);
  return storage;
}

for (const kind of ['sqlite', 'postgres'] as const) {
  describeRateLimitStoreContract(`SQL (${kind}, real clock)`, async () => {
    const storage = await sqlStorage(kind);
    return { store: new SqlRateLimitStore(storage.db, storage.dialect), advance: sleep, toleranceMs: 30, close: () => storage.close() };
  });
}

describe.runIf(runRedis)('Redis stores', () => {
  describeRateLimitStoreContract('Redis (one Lua script, the server clock)', async () => {
    const client = openRedis(redis!.url);
    return { store: new RedisRateLimitStore(client, `t${counter++}:`), advance: sleep, toleranceMs: 30, close: async () => void client.disconnect() };
  });

  describeIdempotencyStoreContract('Redis', async () => {
    const clients = [openRedis(redis!.url)];
    const prefix = `t${counter++}:`;
    return {
      store: new RedisIdempotencyStore(clients[0]!, prefix),
      reopen: async () => {
        const again = openRedis(redis!.url);
        clients.push(again);
        return new RedisIdempotencyStore(again, prefix);
      },
      close: async () => {
        for (const c of clients) c.disconnect();
      },
    };
  });

  it('shares one limit between two nodes (two connections): exactly the burst of 40 concurrent calls passes', async () => {
    const a = openRedis(redis!.url);
    const b = openRedis(redis!.url);
    const prefix = `t${counter++}:`;
    const nodes = [new RedisRateLimitStore(a, prefix), new RedisRateLimitStore(b, prefix)];
    const tier = { requests_per_minute: 6, burst: 7 };
    const decisions = await Promise.all(Array.from({ length: 40 }, (_, i) => nodes[i % 2]!.consume('shared', tier)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(7);
    a.disconnect();
    b.disconnect();
  });

  it('agrees with the gcra step function it ports', async () => {
    const client = openRedis(redis!.url);
    const store = new RedisRateLimitStore(client, `t${counter++}:`);
    const tier = { requests_per_minute: 120, burst: 2 };
    const first = await store.consume('k', tier);
    expect(first).toMatchObject({ allowed: true, remaining: 1, limit: 2, policy: gcra(0, undefined, tier).decision.policy });
    client.disconnect();
  });

  it('answers store_unavailable when Redis is down', async () => {
    const client = openRedis('redis://127.0.0.1:9');
    await expect(new RedisRateLimitStore(client).consume('k', { requests_per_minute: 60, burst: 1 })).rejects.toMatchObject({ code: 'store_unavailable' });
    await expect(new RedisIdempotencyStore(client).begin({ scope: 's', key: 'k', fingerprint: 'f', requestId: 'r', now: 1, leaseMs: 1000 })).rejects.toMatchObject({ code: 'store_unavailable' });
    client.disconnect();
  });
});

describe('SQL rate limits, stepped by one statement on SQLite', () => {
  it('decides exactly as the in-memory GCRA, denials and fractional intervals included', async () => {
    const storage = await sqlStorage('sqlite');
    try {
      let now = 1_764_200_000_123.25;
      const sqlStore = new SqlRateLimitStore(storage.db, storage.dialect, () => now);
      const memory = new MemoryRateLimitStore({ now: () => now });
      const tiers = [
        { requests_per_minute: 1_000_000, burst: 1_000_000 },
        { requests_per_minute: 7, burst: 3 },
        { requests_per_minute: 600, burst: 1 },
        { requests_per_minute: 333, burst: 5 },
      ];
      let denied = 0;
      // A fixed pseudo-random walk: bursts at one instant, and steps shorter and longer than the intervals.
      let seed = 7;
      const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
      for (let i = 0; i < 600; i++) {
        const tier = tiers[i % tiers.length]!;
        const key = `k${i % 6}`;
        const got = await sqlStore.consume(key, tier);
        expect(got).toEqual(await memory.consume(key, tier));
        if (!got.allowed) denied++;
        if (next() < 0.6) now += next() * 300 + 0.0625;
      }
      expect(denied).toBeGreaterThan(50);
    } finally {
      await storage.close();
    }
  });
});
