import { describe, expect, it, vi } from 'vitest';
import type { CrawlProgress } from '../crawler/index.js';
import { crawlProgressLine, formatDuration, RateMeter } from './progress.js';

describe('progress helpers', () => {
  it('formats durations for people', () => {
    expect(formatDuration(0)).toBe('0 s');
    expect(formatDuration(12_400)).toBe('12 s');
    expect(formatDuration(185_000)).toBe('3 min 05 s');
    expect(formatDuration(3_720_000)).toBe('1 h 02 min');
  });

  it('estimates the rate from recent samples and the time left from it', () => {
    vi.useFakeTimers();
    try {
      vi.setSystemTime(0);
      const meter = new RateMeter(1000, 30_000);
      expect(meter.describe(0, 'passages')).toBe('0/1000 passages');
      vi.setSystemTime(10_000);
      expect(meter.describe(100, 'passages')).toBe('100/1000 passages · 10.0 passages/s · 1 min 30 s left');
      // It slows down: the window follows what happens now.
      vi.setSystemTime(50_000);
      meter.describe(200, 'passages');
      vi.setSystemTime(90_000);
      expect(meter.describe(300, 'passages')).toBe('300/1000 passages · 2.5 passages/s · 4 min 40 s left');
      vi.setSystemTime(95_000);
      expect(meter.describe(1000, 'passages')).toBe('1000/1000 passages · done');
    } finally {
      vi.useRealTimers();
    }
  });

  it('shows no rate and no time left before there is a rate to show', () => {
    vi.useFakeTimers();
    try {
      // The first line: a meter made at the first batch, read a millisecond later.
      vi.setSystemTime(1_000);
      const meter = new RateMeter(922);
      vi.setSystemTime(1_001);
      expect(meter.describe(64, 'passages')).toBe('64/922 passages');
      vi.setSystemTime(1_002);
      expect(meter.describe(128, 'passages')).toBe('128/922 passages');
      // Samples spanning less than the minimum (2 s) still show no rate, however fast they look.
      vi.setSystemTime(2_900);
      expect(meter.describe(640, 'passages')).toBe('640/922 passages');
      // Once the samples span two seconds, the rate is the progress since the first sample.
      vi.setSystemTime(3_001);
      expect(meter.describe(704, 'passages')).toBe('704/922 passages · 320.0 passages/s · 1 s left');
      // No progress over the span: no rate either (not "0.0 passages/s", not an endless time left).
      const stalled = new RateMeter(922);
      stalled.describe(64, 'passages');
      vi.setSystemTime(10_000);
      expect(stalled.describe(64, 'passages')).toBe('64/922 passages');
    } finally {
      vi.useRealTimers();
    }
  });

  it("the crawl's line shows its rate and time left once the crawl has run two seconds", () => {
    const base: CrawlProgress = {
      found: 3, stored: 1, fetched: 1, unchanged: 0, fresh: 0, storedBefore: 0, maxPages: 500, duplicates: 0, failed: 0, failures: {}, gone: 0,
      skipped: { total: 0, byReason: {} }, queued: 2, outOfScope: [], pagesPerSecond: 40, etaMs: 50, elapsedMs: 25,
    };
    expect(crawlProgressLine(base)).toBe('crawl: stored 1/500 · queued 2 · duplicates 0 · failed 0 · skipped 0 · 0 s');
    expect(crawlProgressLine({ ...base, stored: 60, elapsedMs: 3_000, pagesPerSecond: 20, etaMs: 4_000 })).toBe(
      'crawl: stored 60/500 · queued 2 · duplicates 0 · failed 0 · skipped 0 · 20.0 pages/s · ~4 s left · 3 s',
    );
    // The closing line of a short crawl: its rate is over the whole run; nothing is left.
    expect(crawlProgressLine({ ...base, stored: 3, queued: 0, elapsedMs: 400, pagesPerSecond: 7.5, etaMs: 0 }, true)).toBe(
      'crawl: stored 3/500 · queued 0 · duplicates 0 · failed 0 · skipped 0 · 7.5 pages/s · 0 s',
    );
  });
});
