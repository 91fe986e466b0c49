import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { IdempotencyStore, StoredResponse } from './idempotency.js';

export interface IdempotencyHarness {
  store: IdempotencyStore;
  /** A second handle on the same records (another process, a restart); the same store when records live in memory. */
  reopen(): Promise<IdempotencyStore>;
  close?(): Promise<void>;
}

const LEASE_MS = 60_000;
const response: StoredResponse = { status: 200, headers: { 'x-request-id': 'req_first' }, body: '{"results":["ünïcode ✓"]}' };

/**
 * The behaviour every IdempotencyStore must show. Scopes are random per test, so a shared server can be used as is.
 * Clocks are passed in, so no test sleeps.
 */
export function describeIdempotencyStoreContract(name: string, makeHarness: () => Promise<IdempotencyHarness>): void {
  describe(`IdempotencyStore contract: ${name}`, () => {
    const harnesses: IdempotencyHarness[] = [];
    const setup = async () => {
      const harness = await makeHarness();
      harnesses.push(harness);
      return harness;
    };
    afterAll(async () => {
      for (const h of harnesses) await h.close?.();
    });
    const scope = () => `payer:${randomUUID()}`;
    const t0 = 1_763_900_000_000;

    it('runs the first request, replays its stored response for the same request, refuses another request', async () => {
      const { store } = await setup();
      const s = scope();
      const first = await store.begin({ scope: s, key: 'k1', fingerprint: 'f1', requestId: 'req_a', now: t0, leaseMs: LEASE_MS });
      expect(first).toEqual({ state: 'started', lease: 'req_a' });
      await store.complete({ scope: s, key: 'k1', lease: 'req_a' }, response, t0 + 86_400_000);
      expect(await store.begin({ scope: s, key: 'k1', fingerprint: 'f1', requestId: 'req_b', now: t0 + 1000, leaseMs: LEASE_MS })).toEqual({ state: 'replay', response });
      expect(await store.begin({ scope: s, key: 'k1', fingerprint: 'f2', requestId: 'req_c', now: t0 + 1000, leaseMs: LEASE_MS })).toEqual({ state: 'mismatch' });
    });

    it('says in_progress while the first runs, mismatch for another request, and keeps payers apart', async () => {
      const { store } = await setup();
      const s = scope();
      await store.begin({ scope: s, key: 'k', fingerprint: 'f', requestId: 'req_a', now: t0, leaseMs: LEASE_MS });
      expect(await store.begin({ scope: s, key: 'k', fingerprint: 'f', requestId: 'req_b', now: t0 + 5, leaseMs: LEASE_MS })).toEqual({ state: 'in_progress' });
      expect(await store.begin({ scope: s, key: 'k', fingerprint: 'other', requestId: 'req_c', now: t0 + 5, leaseMs: LEASE_MS })).toEqual({ state: 'mismatch' });
      expect(await store.begin({ scope: scope(), key: 'k', fingerprint: 'other', requestId: 'req_d', now: t0 + 5, leaseMs: LEASE_MS })).toEqual({
        state: 'started',
        lease: 'req_d',
      });
    });

    it('forgets an abandoned call so a retry runs, but only its lease holder can abandon or complete it', async () => {
      const { store } = await setup();
      const s = scope();
      await store.begin({ scope: s, key: 'k', fingerprint: 'f', requestId: 'req_a', now: t0, leaseMs: LEASE_MS });
      await store.abandon({ scope: s, key: 'k', lease: 'req_intruder' });
      await store.complete({ scope: s, key: 'k', lease: 'req_intruder' }, response, t0 + 1e6);
      expect((await store.begin({ scope: s, key: 'k', fingerprint: 'f', requestId: 'req_b', now: t0 + 1, leaseMs: LEASE_MS })).state).toBe('in_progress');
      await store.abandon({ scope: s, key: 'k', lease: 'req_a' });
      expect(await store.begin({ scope: s, key: 'k', fingerprint: 'f2', requestId: 'req_c', now: t0 + 2, leaseMs: LEASE_MS })).toEqual({ state: 'started', lease: 'req_c' });
    });

    it('lets a retry take over a call whose lease ran out; the stale holder can then neither complete nor abandon it', async () => {
      const { store } = await setup();
      const s = scope();
      await store.begin({ scope: s, key: 'k', fingerprint: 'f', requestId: 'req_crashed', now: t0, leaseMs: LEASE_MS });
      expect((await store.begin({ scope: s, key: 'k', fingerprint: 'f', requestId: 'req_b', now: t0 + LEASE_MS - 1, leaseMs: LEASE_MS })).state).toBe('in_progress');
      expect(await store.begin({ scope: s, key: 'k', fingerprint: 'f', requestId: 'req_c', now: t0 + LEASE_MS, leaseMs: LEASE_MS })).toEqual({ state: 'started', lease: 'req_c' });
      await store.complete({ scope: s, key: 'k', lease: 'req_crashed' }, { ...response, body: 'stale' }, t0 + 1e9);
      await store.abandon({ scope: s, key: 'k', lease: 'req_crashed' });
      await store.complete({ scope: s, key: 'k', lease: 'req_c' }, response, t0 + 1e9);
      expect(await store.begin({ scope: s, key: 'k', fingerprint: 'f', requestId: 'req_d', now: t0 + LEASE_MS + 1, leaseMs: LEASE_MS })).toEqual({ state: 'replay', response });
    });

    it('frees a key once its replay window has ended', async () => {
      const { store } = await setup();
      const s = scope();
      await store.begin({ scope: s, key: 'k', fingerprint: 'f', requestId: 'req_a', now: t0, leaseMs: LEASE_MS });
      await store.complete({ scope: s, key: 'k', lease: 'req_a' }, response, t0 + 10_000);
      expect((await store.begin({ scope: s, key: 'k', fingerprint: 'g', requestId: 'req_b', now: t0 + 9_999, leaseMs: LEASE_MS })).state).toBe('mismatch');
      expect(await store.begin({ scope: s, key: 'k', fingerprint: 'g', requestId: 'req_c', now: t0 + 10_000, leaseMs: LEASE_MS })).toEqual({ state: 'started', lease: 'req_c' });
    });

    it('lets exactly one of 50 concurrent first requests run', async () => {
      const { store } = await setup();
      const s = scope();
      const outcomes = await Promise.all(
        Array.from({ length: 50 }, (_, i) => store.begin({ scope: s, key: 'same', fingerprint: 'f', requestId: `req_${i}`, now: t0, leaseMs: LEASE_MS })),
      );
      expect(outcomes.filter((o) => o.state === 'started')).toHaveLength(1);
      expect(outcomes.filter((o) => o.state === 'in_progress')).toHaveLength(49);
    });

    it('keeps a stored response across a reopen of the store', async () => {
      const harness = await setup();
      const s = scope();
      await harness.store.begin({ scope: s, key: 'k', fingerprint: 'f', requestId: 'req_a', now: t0, leaseMs: LEASE_MS });
      await harness.store.complete({ scope: s, key: 'k', lease: 'req_a' }, response, t0 + 86_400_000);
      const reopened = await harness.reopen();
      expect(await reopened.begin({ scope: s, key: 'k', fingerprint: 'f', requestId: 'req_b', now: t0 + 1000, leaseMs: LEASE_MS })).toEqual({ state: 'replay', response });
    });
  });
}
