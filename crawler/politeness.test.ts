import { describe, expect, it } from 'vitest';
import { HostGate } from './host-gate.js';
import { asksToBackOff, crawlDelayMs, retryAfterMs } from './politeness.js';

describe('retryAfterMs', () => {
  const limits = { defaultMs: 30_000, maxMs: 120_000 };

  it('reads delay-seconds and HTTP-dates, falls back to the default, and caps', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(retryAfterMs('1', { ...limits, now })).toBe(1_000);
    expect(retryAfterMs(' 0 ', { ...limits, now })).toBe(0);
    expect(retryAfterMs('Wed, 01 Jan 2025 00:00:05 GMT', { ...limits, now })).toBe(5_000);
    expect(retryAfterMs('Tue, 31 Dec 2024 23:00:00 GMT', { ...limits, now })).toBe(0);
    expect(retryAfterMs(null, { ...limits, now })).toBe(30_000);
    expect(retryAfterMs('soon', { ...limits, now })).toBe(30_000);
    expect(retryAfterMs('-5', { ...limits, now })).toBe(30_000);
    expect(retryAfterMs('86400', { ...limits, now })).toBe(120_000);
  });

  it('backs off on 429 always and on 503 only with Retry-After', () => {
    expect(asksToBackOff(429, null)).toBe(true);
    expect(asksToBackOff(503, '3')).toBe(true);
    expect(asksToBackOff(503, null)).toBe(false);
    expect(asksToBackOff(500, '3')).toBe(false);
  });
});

describe('crawlDelayMs', () => {
  it('takes the larger of per_host_delay_ms and Crawl-delay, caps it, and ignores non-positive values', () => {
    expect(crawlDelayMs(1, { perHostDelayMs: 0, maxMs: 30_000 })).toEqual({ delayMs: 1_000, capped: false });
    expect(crawlDelayMs(0.2, { perHostDelayMs: 500, maxMs: 30_000 })).toEqual({ delayMs: 500, capped: false });
    expect(crawlDelayMs(3600, { perHostDelayMs: 500, maxMs: 30_000 })).toEqual({ delayMs: 30_000, capped: true });
    expect(crawlDelayMs(0, { perHostDelayMs: 500, maxMs: 30_000 })).toBeNull();
    expect(crawlDelayMs(Number.NaN, { perHostDelayMs: 500, maxMs: 30_000 })).toBeNull();
  });
});

describe('HostGate', () => {
  it('spaces starts by a per-host delay and holds a paused host back, other hosts unaffected', async () => {
    const gate = new HostGate(4, 0);
    gate.setHostDelay('slow.test', 200);
    const t0 = Date.now();
    const starts: Record<string, number[]> = { 'slow.test': [], 'fast.test': [] };
    const take = async (host: string) => {
      const release = await gate.acquire(host);
      starts[host]?.push(Date.now() - t0);
      release();
    };
    await Promise.all([take('slow.test'), take('slow.test'), take('slow.test'), take('fast.test'), take('fast.test')]);
    expect(starts['slow.test']?.[2]).toBeGreaterThanOrEqual(390);
    expect(Math.max(...(starts['fast.test'] ?? []))).toBeLessThan(100);

    gate.pause('fast.test', 300);
    const t1 = Date.now();
    const [paused, other] = await Promise.all([
      gate.acquire('fast.test').then((release) => (release(), Date.now() - t1)),
      gate.acquire('third.test').then((release) => (release(), Date.now() - t1)),
    ]);
    expect(paused).toBeGreaterThanOrEqual(290);
    expect(other).toBeLessThan(100);
  });

  it('holds back a request already waiting for its slot when a pause comes in', async () => {
    const gate = new HostGate(4, 100);
    const t0 = Date.now();
    (await gate.acquire('h.test'))();
    const waiting = gate.acquire('h.test').then((release) => (release(), Date.now() - t0));
    await new Promise((resolve) => setTimeout(resolve, 20));
    gate.pause('h.test', 400);
    expect(await waiting).toBeGreaterThanOrEqual(400);
  });
});
