import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { RateLimitStore, RateLimitTier } from './rate-limit.js';

export interface RateLimitHarness {
  store: RateLimitStore;
  /** Moves the store's clock forward: a manual clock for in-process stores, a real sleep for shared ones. */
  advance(ms: number): Promise<void>;
  /** Slack for timing assertions: 0 with a manual clock, a few tens of ms with a real one. */
  toleranceMs: number;
  close?(): Promise<void>;
}

/** 600 per minute = one request every 100 ms, so a real-clock store needs only short sleeps. */
const tier: RateLimitTier = { requests_per_minute: 600, burst: 3 };
const intervalMs = 100;

/**
 * The behaviour every RateLimitStore must show. Call inside a test file:
 * `describeRateLimitStoreContract('memory', async () => harness)`. Keys are random per test, so a shared Redis
 * can be used as is.
 */
export function describeRateLimitStoreContract(name: string, makeHarness: () => Promise<RateLimitHarness>): void {
  describe(`RateLimitStore contract: ${name}`, () => {
    const harnesses: RateLimitHarness[] = [];
    const setup = async () => {
      const harness = await makeHarness();
      harnesses.push(harness);
      return harness;
    };
    afterAll(async () => {
      for (const h of harnesses) await h.close?.();
    });
    const freshKey = () => `contract:${randomUUID()}`;

    it('allows the burst at once, then denies with a retry time within one interval', async () => {
      const { store, toleranceMs } = await setup();
      const key = freshKey();
      const seen = [];
      for (let i = 0; i < tier.burst; i++) seen.push(await store.consume(key, tier));
      expect(seen.map((d) => d.allowed)).toEqual([true, true, true]);
      expect(seen.map((d) => d.remaining)).toEqual([2, 1, 0]);
      for (const d of seen) {
        expect(d.limit).toBe(tier.burst);
        expect(d.retryAfterMs).toBe(0);
      }
      const denied = await store.consume(key, tier);
      expect(denied.allowed).toBe(false);
      expect(denied.remaining).toBe(0);
      expect(denied.limit).toBe(tier.burst);
      expect(denied.retryAfterMs).toBeGreaterThan(0);
      expect(denied.retryAfterMs).toBeLessThanOrEqual(intervalMs);
      expect(denied.resetMs).toBeGreaterThan(tier.burst * intervalMs - intervalMs - toleranceMs);
      expect(denied.resetMs).toBeLessThanOrEqual(tier.burst * intervalMs);
    });

    it('reports the time until the bucket is full again', async () => {
      const { store, toleranceMs } = await setup();
      const key = freshKey();
      const first = await store.consume(key, tier);
      expect(first.resetMs).toBeGreaterThanOrEqual(intervalMs - toleranceMs);
      expect(first.resetMs).toBeLessThanOrEqual(intervalMs);
      const second = await store.consume(key, tier);
      expect(second.resetMs).toBeGreaterThanOrEqual(2 * intervalMs - toleranceMs);
      expect(second.resetMs).toBeLessThanOrEqual(2 * intervalMs);
    });

    it('refills at the sustained rate after a denial', async () => {
      const { store, advance, toleranceMs } = await setup();
      const key = freshKey();
      for (let i = 0; i < tier.burst; i++) await store.consume(key, tier);
      const denied = await store.consume(key, tier);
      expect(denied.allowed).toBe(false);
      await advance(denied.retryAfterMs + toleranceMs);
      const again = await store.consume(key, tier);
      expect(again.allowed).toBe(true);
      expect(again.remaining).toBe(0);
      // Only one request was replenished: the next one is denied again.
      expect((await store.consume(key, tier)).allowed).toBe(false);
      await advance(tier.burst * intervalMs + toleranceMs);
      const afterFullRefill = [];
      for (let i = 0; i < tier.burst; i++) afterFullRefill.push((await store.consume(key, tier)).allowed);
      expect(afterFullRefill).toEqual([true, true, true]);
    });

    it('does not let denied requests push the retry time further out', async () => {
      const { store, advance, toleranceMs } = await setup();
      const key = freshKey();
      for (let i = 0; i < tier.burst; i++) await store.consume(key, tier);
      const firstDenial = await store.consume(key, tier);
      for (let i = 0; i < 5; i++) await store.consume(key, tier);
      const laterDenial = await store.consume(key, tier);
      expect(laterDenial.retryAfterMs).toBeLessThanOrEqual(firstDenial.retryAfterMs);
      await advance(firstDenial.retryAfterMs + toleranceMs);
      expect((await store.consume(key, tier)).allowed).toBe(true);
    });

    it('keeps keys independent', async () => {
      const { store } = await setup();
      const a = freshKey();
      const b = freshKey();
      for (let i = 0; i < tier.burst; i++) await store.consume(a, tier);
      expect((await store.consume(a, tier)).allowed).toBe(false);
      const other = await store.consume(b, tier);
      expect(other.allowed).toBe(true);
      expect(other.remaining).toBe(tier.burst - 1);
    });

    it('applies the tier given with each call', async () => {
      const { store } = await setup();
      const big: RateLimitTier = { requests_per_minute: 60, burst: 7 };
      const key = freshKey();
      const decisions = [];
      for (let i = 0; i < 8; i++) decisions.push(await store.consume(key, big));
      expect(decisions.filter((d) => d.allowed)).toHaveLength(7);
      expect(decisions[0]?.limit).toBe(7);
      expect(decisions[0]?.policy).toBe('q=7;w=7');
      expect(decisions[7]?.allowed).toBe(false);
      expect(decisions[7]?.retryAfterMs).toBeGreaterThan(900);
      expect(decisions[7]?.retryAfterMs).toBeLessThanOrEqual(1000);
    });

    it('allows exactly the burst under concurrent calls', async () => {
      const { store } = await setup();
      const key = freshKey();
      const burst: RateLimitTier = { requests_per_minute: 60, burst: 5 };
      const decisions = await Promise.all(Array.from({ length: 20 }, () => store.consume(key, burst)));
      expect(decisions.filter((d) => d.allowed)).toHaveLength(5);
      expect(decisions.filter((d) => d.allowed).map((d) => d.remaining).sort()).toEqual([0, 1, 2, 3, 4]);
    });

    it('names quota and window in the policy', async () => {
      const { store } = await setup();
      expect((await store.consume(freshKey(), tier)).policy).toBe('q=3;w=1');
      expect((await store.consume(freshKey(), { requests_per_minute: 600, burst: 60 })).policy).toBe('q=60;w=6');
    });
  });
}
