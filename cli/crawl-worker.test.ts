import { describe, expect, it } from 'vitest';
import { configSchema } from '../core/config.js';
import { DEFAULT_SEED_OPTIONS } from '../storage/crawl-seeds.js';
import { crawlerConfigFor } from './crawl-worker.js';

describe('a seed crawl settings', () => {
  const base = configSchema.parse({ crawler: { include: ['^https://docs\\.example/en/'], exclude: ['/old/'] } }).crawler;

  it("keeps the config's include patterns for a seed without its own (the seeds the config file lists)", () => {
    const settings = crawlerConfigFor(base, { options: DEFAULT_SEED_OPTIONS });
    expect(settings.include).toEqual(['^https://docs\\.example/en/']);
    expect(settings.exclude).toEqual(['/old/']);
  });

  it("uses a seed's own include patterns instead, and adds its excludes", () => {
    const settings = crawlerConfigFor(base, { options: { ...DEFAULT_SEED_OPTIONS, include: ['/guide/'], exclude: ['/draft/'] } });
    expect(settings.include).toEqual(['/guide/']);
    expect(settings.exclude).toEqual(['/old/', '/draft/']);
  });
});
