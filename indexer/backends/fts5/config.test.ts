import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import '../../../payments/plugins.js'; // a configuration needs the payment modes' sections
import '../plugins.js'; // the index backends' sections, this one's among them
import { configSection, loadConfig, type ConfigInput } from '../../../core/index.js';
import { fts5Config, type Fts5Settings } from './config.js';

function load(content: object, overrides: ConfigInput = {}): { settings: Fts5Settings; warnings: string[] } {
  const dir = mkdtempSync(path.join(tmpdir(), 'notary-fts5-config-'));
  const file = path.join(dir, 'notary.json');
  writeFileSync(file, JSON.stringify(content));
  const warnings: string[] = [];
  const cfg = loadConfig({ env: {}, file, warn: (m) => warnings.push(m), overrides: { data_dir: dir, ...overrides } });
  return { settings: configSection(cfg, fts5Config), warnings };
}

describe('indexer.sqlite-fts5: the embedded index’s own settings', () => {
  it('has its defaults under indexer.sqlite-fts5 and no warning', () => {
    expect(load({})).toEqual({
      settings: { ranking_cache: 10_000, parallel_page_ranking: true, parallel_passage_ranking_above: 100_000, memory_ranking_up_to: 50_000 },
      warnings: [],
    });
  });

  it('still reads the former search.* names, with a warning that names the new key', () => {
    const { settings, warnings } = load({ search: { ranking_cache: 7, parallel_page_ranking: false, parallel_passage_ranking_above: 3, memory_ranking_up_to: 0, max_results: 5 } });
    expect(settings).toEqual({ ranking_cache: 7, parallel_page_ranking: false, parallel_passage_ranking_above: 3, memory_ranking_up_to: 0 });
    expect(warnings).toEqual([
      'config key search.ranking_cache is deprecated: use indexer.sqlite-fts5.ranking_cache (read this time)',
      'config key search.parallel_page_ranking is deprecated: use indexer.sqlite-fts5.parallel_page_ranking (read this time)',
      'config key search.parallel_passage_ranking_above is deprecated: use indexer.sqlite-fts5.parallel_passage_ranking_above (read this time)',
      'config key search.memory_ranking_up_to is deprecated: use indexer.sqlite-fts5.memory_ranking_up_to (read this time)',
    ]);
  });

  it('lets the new key win over the former one, says so, and leaves the caller’s overrides as they were', () => {
    const overrides = { search: { ranking_cache: 9 } };
    // The former name is no key of the typed configuration any more: a file's or a caller's untyped object.
    const { settings, warnings } = load({ indexer: { 'sqlite-fts5': { ranking_cache: 2 } } }, overrides as ConfigInput);
    expect(settings.ranking_cache).toBe(2);
    expect(warnings).toEqual(['config key search.ranking_cache is deprecated and ignored: indexer.sqlite-fts5.ranking_cache is set']);
    expect(overrides).toEqual({ search: { ranking_cache: 9 } });
  });

  it('checks a former name’s value as the new key’s', () => {
    expect(() => load({ search: { ranking_cache: -1 } })).toThrow(/indexer\.sqlite-fts5\.ranking_cache/);
  });
});
