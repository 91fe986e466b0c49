import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import '../payments/plugins.js'; // the registered plug-ins' sections (payment modes, receipts, facilitator)
import { availableParallelism } from 'node:os';
import { loadConfig, modelRunners } from './config.js';

function withFile(content: object): { file: string; warnings: string[]; warn: (m: string) => void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'notary-config-'));
  const file = path.join(dir, 'notary.json');
  writeFileSync(file, JSON.stringify(content));
  const warnings: string[] = [];
  return { file, warnings, warn: (m) => warnings.push(m) };
}

describe('loadConfig: pricing and payments', () => {
  it('has one pricing section with the documented defaults, and the API-key mode on', () => {
    const cfg = loadConfig({ env: {}, overrides: { data_dir: mkdtempSync(path.join(tmpdir(), 'notary-config-')) } });
    expect(cfg.pricing).toEqual({
      search: { credits_by_depth: [1, 1, 2], cross_encoder_credits: 40 },
      extract: { credits: 1, credits_rendered: 2 },
      map: { credits: 1 },
      crawl: { credits_per_page: 1 },
      credit_price: { amount: '0.001', asset: 'USDC', decimals: 6 },
    });
    expect(cfg.payments.modes['api_key']?.enabled).toBe(true);
    expect(cfg.payments.idempotency).toEqual({ ttl_hours: 24, in_progress_timeout_s: 300 });
  });

  it('still reads the old price keys, with a deprecation warning each', () => {
    const { file, warnings, warn } = withFile({ search: { credits_by_depth: [2, 5] }, extract: { credits: 3, credits_rendered: 7 } });
    const cfg = loadConfig({ env: {}, file, warn });
    expect(cfg.pricing.search.credits_by_depth).toEqual([2, 5]);
    expect(cfg.pricing.extract).toEqual({ credits: 3, credits_rendered: 7 });
    expect(warnings).toEqual([
      'config key search.credits_by_depth is deprecated: use pricing.search.credits_by_depth (read this time)',
      'config key extract.credits is deprecated: use pricing.extract.credits (read this time)',
      'config key extract.credits_rendered is deprecated: use pricing.extract.credits_rendered (read this time)',
    ]);
  });

  it('lets the new key win over the old one, and says so', () => {
    const { file, warnings, warn } = withFile({ search: { credits_by_depth: [9] }, pricing: { search: { credits_by_depth: [1, 2] } } });
    expect(loadConfig({ env: {}, file, warn }).pricing.search.credits_by_depth).toEqual([1, 2]);
    expect(warnings).toEqual(['config key search.credits_by_depth is deprecated and ignored: pricing.search.credits_by_depth is set']);
  });

  it('refuses a credit price finer than the asset, an unknown anonymous tier and no payment mode, listing every problem', () => {
    const { file, warn } = withFile({
      pricing: { credit_price: { amount: '0.0000001', decimals: 6 } },
      payments: { anonymous_tier: 'gold', modes: { api_key: { enabled: false }, mpp: { enabled: false } } },
    });
    const message = (() => {
      try {
        loadConfig({ env: {}, file, warn });
      } catch (err) {
        return (err as Error).message;
      }
      return 'accepted';
    })();
    expect(message).toContain('pricing.credit_price.amount: has more than 6 decimal places');
    expect(message).toContain('payments.anonymous_tier: tier "gold" is not defined in tiers');
    expect(message).toContain('payments.modes: at least one payment mode must be enabled');
    const bad = withFile({ pricing: { credit_price: { amount: '1e-3' } } });
    expect(() => loadConfig({ env: {}, file: bad.file, warn })).toThrow(/pricing\.credit_price\.amount: must be a decimal number/);
  });

  it('reads the MPP section: defaults, origins reduced to origins, and the wire format\'s 5-minute ceiling', () => {
    const defaults = loadConfig({ env: {}, file: withFile({}).file, warn: () => {} }).payments.modes.mpp;
    expect(defaults).toEqual({ enabled: true, max_parties: 16, max_lifetime_s: 300, clock_skew_s: 30, origins: [] });
    const set = loadConfig({ env: {}, file: withFile({ payments: { modes: { mpp: { origins: ['https://search.example.org/v1/', 'http://10.0.0.5:8080'] } } } }).file, warn: () => {} });
    expect(set.payments.modes['mpp']?.['origins']).toEqual(['https://search.example.org', 'http://10.0.0.5:8080']);
    for (const [mpp, problem] of [
      [{ max_lifetime_s: 301 }, 'payments.modes.mpp.max_lifetime_s'],
      [{ max_parties: 0 }, 'payments.modes.mpp.max_parties'],
      [{ origins: ['not a url'] }, 'payments.modes.mpp.origins.0'],
    ] as const) {
      expect(() => loadConfig({ env: {}, file: withFile({ payments: { modes: { mpp } } }).file, warn: () => {} })).toThrow(problem);
    }
  });
});

describe('loadConfig: the address policy', () => {
  const dataDir = (): string => mkdtempSync(path.join(tmpdir(), 'notary-config-'));

  it('reads allowed private ranges from the environment and refuses what is not a CIDR range', () => {
    const cfg = loadConfig({ env: { NOTARY_ALLOWED_PRIVATE_RANGES: '10.20.0.0/16, fd12::/16' }, overrides: { data_dir: dataDir() } });
    expect(cfg.extract.allowed_private_ranges).toEqual(['10.20.0.0/16', 'fd12::/16']);
    expect(cfg.extract.allow_private_networks).toBe(false);
    expect(() => loadConfig({ env: { NOTARY_ALLOWED_PRIVATE_RANGES: '10.20.0.0' }, overrides: { data_dir: dataDir() } })).toThrow(
      /extract\.allowed_private_ranges\.0: must be a CIDR range/,
    );
  });
});

describe('loadConfig: embeddings.ann_above', () => {
  const dataDir = () => mkdtempSync(path.join(tmpdir(), 'notary-config-'));
  it('defaults to 50,000 vectors, takes 0 (exact only) from the environment and refuses negatives', () => {
    expect(loadConfig({ env: {}, overrides: { data_dir: dataDir() } }).embeddings.ann_above).toBe(50_000);
    expect(loadConfig({ env: { NOTARY_EMBEDDING_ANN_ABOVE: '0' }, overrides: { data_dir: dataDir() } }).embeddings.ann_above).toBe(0);
    expect(() => loadConfig({ env: { NOTARY_EMBEDDING_ANN_ABOVE: 'many' }, overrides: { data_dir: dataDir() } })).toThrow(/NOTARY_EMBEDDING_ANN_ABOVE/);
    expect(() => loadConfig({ env: { NOTARY_EMBEDDING_ANN_ABOVE: '-1' }, overrides: { data_dir: dataDir() } })).toThrow(/ann_above/);
  });
  it('saves the graph by default; NOTARY_EMBEDDING_ANN_PERSIST=false turns that off, and a non-boolean is refused', () => {
    expect(loadConfig({ env: {}, overrides: { data_dir: dataDir() } }).embeddings.ann_persist).toBe(true);
    expect(loadConfig({ env: { NOTARY_EMBEDDING_ANN_PERSIST: 'false' }, overrides: { data_dir: dataDir() } }).embeddings.ann_persist).toBe(false);
    expect(() => loadConfig({ env: { NOTARY_EMBEDDING_ANN_PERSIST: 'maybe' }, overrides: { data_dir: dataDir() } })).toThrow(/NOTARY_EMBEDDING_ANN_PERSIST/);
  });
});

describe('modelRunners: reranker.workers and reranker.threads', () => {
  const dataDir = () => mkdtempSync(path.join(tmpdir(), 'notary-config-'));
  const reranker = (env: Record<string, string>, overrides: object = {}) =>
    loadConfig({ env, overrides: { data_dir: dataDir(), reranker: overrides } }).reranker;
  it('by default runs a model in worker threads of one ONNX thread, one per core shared among the API processes (1..4)', () => {
    const cores = availableParallelism();
    expect(modelRunners(reranker({}))).toEqual({ workers: Math.min(4, cores), threads: 1 });
    expect(modelRunners(reranker({}), cores)).toEqual({ workers: 1, threads: 1 });
    expect(modelRunners(reranker({}), cores * 8)).toEqual({ workers: 1, threads: 1 });
  });
  it('0 workers runs the model in the calling thread with the cores as ONNX threads; explicit values win', () => {
    const cores = Math.min(4, availableParallelism());
    expect(modelRunners(reranker({ NOTARY_MODEL_WORKERS: '0' }))).toEqual({ workers: 0, threads: cores });
    expect(modelRunners(reranker({}, { workers: 3, threads: 2 }), 2)).toEqual({ workers: 3, threads: 2 });
    expect(() => reranker({ NOTARY_MODEL_WORKERS: '-1' })).toThrow(/workers/);
  });
});

describe('loadConfig: search.cross_encoder_from_depth', () => {
  const dataDir = () => mkdtempSync(path.join(tmpdir(), 'notary-config-cross-'));
  it('defaults to 2; NOTARY_CROSS_ENCODER_FROM_DEPTH sets it; out of range names the setting', () => {
    expect(loadConfig({ env: {}, overrides: { data_dir: dataDir() } }).search).toMatchObject({ cross_encoder_from_depth: 2, cross_encoder_top_n: 20 });
    expect(loadConfig({ env: { NOTARY_CROSS_ENCODER_FROM_DEPTH: '3' }, overrides: { data_dir: dataDir() } }).search.cross_encoder_from_depth).toBe(3);
    expect(() => loadConfig({ env: { NOTARY_CROSS_ENCODER_FROM_DEPTH: '0' }, overrides: { data_dir: dataDir() } })).toThrow(
      /search\.cross_encoder_from_depth: must be at least 1.*NOTARY_CROSS_ENCODER_FROM_DEPTH/,
    );
    expect(() => loadConfig({ env: {}, overrides: { data_dir: dataDir(), search: { cross_encoder_from_depth: 1.5 } } })).toThrow(
      /search\.cross_encoder_from_depth: must be a whole number from 1 to 10/,
    );
  });
});
