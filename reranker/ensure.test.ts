import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '../core/config.js';
import { Runtime } from '../runtime/index.js';
import { fileAvailable } from '../testkit/components.js';
import { sharedModels, startFakeHub, writePins, type FakeHub } from '../testkit/fake-hub.js';
import { biEncoderDir, crossEncoderDir } from '../testkit/models.js';
import { neededPins } from './ensure.js';

const present = fileAvailable('the models of ../shared', path.join(biEncoderDir, 'onnx', 'model.onnx'));
const { pins, files } = present ? sharedModels() : { pins: [], files: new Map<string, Buffer>() };

describe('neededPins: each pinned model by its own setting', () => {
  const cfg = (reranker: Record<string, unknown>, embeddings: Record<string, unknown> = {}) => configSchema.parse({ reranker, embeddings });
  const names = (list: ReadonlyArray<{ kind: string }>) => list.map((p) => p.kind);

  it('nothing named: both', () => {
    expect(names(neededPins(cfg({}), pins, {}))).toEqual(['cross-encoder', 'bi-encoder']);
  });

  it('a cross-encoder named (setting or NOTARY_RERANKER_MODEL, folder or .onnx file): the bi-encoder still', () => {
    expect(names(neededPins(cfg({ model_dir: crossEncoderDir }), pins, {}))).toEqual(['bi-encoder']);
    expect(names(neededPins(cfg({}), pins, { NOTARY_RERANKER_MODEL: crossEncoderDir }))).toEqual(['bi-encoder']);
    expect(names(neededPins(cfg({ model_dir: path.join(crossEncoderDir, 'onnx', 'model_random_weights_int8.onnx') }), pins, {}))).toEqual(['bi-encoder']);
  });

  it('a bi-encoder named as the reranker embeds too: none', () => {
    expect(neededPins(cfg({ model_dir: biEncoderDir }), pins, {})).toEqual([]);
  });

  it('a bi-encoder named for embeddings, or embeddings off: the cross-encoder only, unless one is named', () => {
    expect(names(neededPins(cfg({}, { model: biEncoderDir }), pins, {}))).toEqual(['cross-encoder']);
    expect(names(neededPins(cfg({}, { model: 'off' }), pins, {}))).toEqual(['cross-encoder']);
    expect(neededPins(cfg({ model_dir: crossEncoderDir }, { model: biEncoderDir }), pins, {})).toEqual([]);
  });
});

describe.runIf(present)('a named cross-encoder and the pinned bi-encoder fetched from the hub (127.0.0.1)', () => {
  let hub: FakeHub;
  let root: string;
  beforeAll(async () => {
    hub = await startFakeHub(files);
    root = mkdtempSync(path.join(tmpdir(), 'notary-ensure-'));
  });
  afterAll(async () => {
    await hub?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('serves hybrid retrieval with the fetched bi-encoder and the named cross-encoder from depth 2, and indexing embeds with it', async () => {
    const config = configSchema.parse({
      data_dir: root,
      reranker: { model_dir: crossEncoderDir, download: true, hub_url: hub.url, workers: 1, cache_dir: path.join(root, 'models') },
      indexer: { passage_min_words: 5, passage_max_words: 40 },
    });
    const env = { NOTARY_MODEL_PINS: writePins(path.join(root, 'pins.json'), pins) };
    const runtime = await Runtime.open(config, { log: () => {}, env });
    try {
      const { assignment } = await runtime.scorers();
      // embeddings.precision int8 (the default): the fetched fp32 bi-encoder's int8 copy, made in the cache at this start.
      expect(assignment).toMatchObject({ retrieval: 'hybrid', bi_encoder: 'all-MiniLM-L6-v2-int8', cross_encoder: 'ms-marco-MiniLM-L-6-v2' });
      expect(existsSync(path.join(root, 'models', 'all-MiniLM-L6-v2-int8', 'onnx', 'model_int8.onnx'))).toBe(true);
      expect(assignment.depths.map((d) => [d.from, d.scorer])).toEqual([
        [1, 'bi-encoder'],
        [2, 'cross-encoder'],
      ]);
      // Only the bi-encoder came from the hub: the cross-encoder is the named folder.
      expect(new Set(hub.requests.map((r) => r.url.split('/resolve/')[0]))).toEqual(new Set(['/sentence-transformers/all-MiniLM-L6-v2']));
      const forIndexing = await runtime.denseForIndexing();
      expect(forIndexing.dense?.embedder.model).toMatch(/^all-MiniLM-L6-v2/);
    } finally {
      await runtime.close();
    }
  }, 120_000);
});
