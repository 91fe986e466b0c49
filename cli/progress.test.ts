import { describe, expect, it, vi } from 'vitest';
import { formatDuration, RateMeter } from './progress.js';

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
      expect(meter.describe(0, 'passages')).toBe('0/1000 passages · 0.0 passages/s · time left unknown');
      vi.setSystemTime(10_000);
      expect(meter.describe(100, 'passages')).toBe('100/1000 passages · 10.0 passages/s · 1 min 30 s left');
      // It slows down: the window follows what happens now.
      vi.setSystemTime(50_000);
      meter.describe(200, 'passages');
      vi.setSystemTime(90_000);
      expect(meter.describe(300, 'passages')).toBe('300/1000 passages · 2.5 passages/s · 4 min 40 s left');
      vi.setSystemTime(95_000);
      expect(meter.describe(1000, 'passages')).toMatch(/^1000\/1000 passages · .* · done$/);
    } finally {
      vi.useRealTimers();
    }
  });
});
