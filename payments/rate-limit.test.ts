import { describe, expect, it } from 'vitest';
import { describeRateLimitStoreContract } from './rate-limit.contract.js';
import { MemoryRateLimitStore, policyFor } from './rate-limit.js';

function manualClock(start = 1_763_000_000_000) {
  let now = start;
  return {
    now: () => now,
    advance: async (ms: number) => {
      now += ms;
    },
  };
}

describeRateLimitStoreContract('memory (manual clock)', async () => {
  const clock = manualClock();
  return { store: new MemoryRateLimitStore({ now: clock.now }), advance: clock.advance, toleranceMs: 0 };
});

describeRateLimitStoreContract('memory (real clock)', async () => ({
  store: new MemoryRateLimitStore(),
  advance: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
  toleranceMs: 30,
}));

describe('MemoryRateLimitStore', () => {
  it('sustains exactly requests_per_minute over a long run with a fractional interval', async () => {
    const clock = manualClock();
    const store = new MemoryRateLimitStore({ now: clock.now });
    const tier = { requests_per_minute: 7, burst: 2 };
    let allowed = 0;
    // One attempt every 100 ms for 10 minutes: the burst plus 7 a minute get through, no more, no fewer.
    for (let t = 0; t < 600_000; t += 100) {
      if ((await store.consume('k', tier)).allowed) allowed++;
      await clock.advance(100);
    }
    expect(allowed).toBe(2 + 70 - 1);
  });

  it('gives exact retry and reset times', async () => {
    const clock = manualClock();
    const store = new MemoryRateLimitStore({ now: clock.now });
    const tier = { requests_per_minute: 60, burst: 10 };
    for (let i = 0; i < 10; i++) await store.consume('k', tier);
    const denied = await store.consume('k', tier);
    expect(denied).toEqual({ allowed: false, limit: 10, remaining: 0, resetMs: 10_000, retryAfterMs: 1000, policy: 'q=10;w=10' });
    await clock.advance(999);
    expect((await store.consume('k', tier)).allowed).toBe(false);
    await clock.advance(1);
    expect(await store.consume('k', tier)).toEqual({ allowed: true, limit: 10, remaining: 0, resetMs: 10_000, retryAfterMs: 0, policy: 'q=10;w=10' });
    await clock.advance(4000);
    expect(await store.consume('k', tier)).toEqual({ allowed: true, limit: 10, remaining: 3, resetMs: 7000, retryAfterMs: 0, policy: 'q=10;w=10' });
  });

  it('forgets keys whose bucket is full again', async () => {
    const clock = manualClock();
    const store = new MemoryRateLimitStore({ now: clock.now, sweepThreshold: 5 });
    const tier = { requests_per_minute: 60, burst: 1 };
    for (let i = 0; i < 5; i++) await store.consume(`old${i}`, tier);
    expect(store.size).toBe(5);
    await clock.advance(1000);
    await store.consume('new', tier);
    expect(store.size).toBe(1);
  });

  it('rejects a nonsensical tier', async () => {
    const store = new MemoryRateLimitStore();
    await expect(store.consume('k', { requests_per_minute: 0, burst: 1 })).rejects.toThrow(RangeError);
    await expect(store.consume('k', { requests_per_minute: 10, burst: 0 })).rejects.toThrow(RangeError);
  });

  it('states the policy window as the time to refill a full burst', () => {
    expect(policyFor({ requests_per_minute: 60, burst: 10 })).toBe('q=10;w=10');
    expect(policyFor({ requests_per_minute: 6000, burst: 600 })).toBe('q=600;w=6');
  });
});
