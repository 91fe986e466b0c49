import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ClusteredCorpus, recallAtK } from '../testkit/synthetic-vectors.js';
import { AnnGraph } from './ann-graph.js';
import { ApproximateSearch } from './ann-search.js';
import type { CachedVectors } from './vector-cache.js';
import { AnnGraphStore } from './ann-store.js';

const D = 32;

/** A cache as SqlVectorIndex keeps it: rows of `d` floats with ids, pages and write seqs. */
function cacheOf(rows: ReadonlyArray<{ id: number; pageId: number; seq: number; vector: Float32Array }>): CachedVectors {
  const matrix = new Float32Array(rows.length * D);
  const ids = new Float64Array(rows.length);
  const pageIds = new Float64Array(rows.length);
  const seqs = new Float64Array(rows.length);
  const position = new Map<number, number>();
  rows.forEach((r, i) => {
    matrix.set(r.vector, i * D);
    ids[i] = r.id;
    pageIds[i] = r.pageId;
    seqs[i] = r.seq;
    position.set(r.id, i);
  });
  return { dimensions: D, size: rows.length, matrix, ids, pageIds, seqs, position };
}

function exactTop(cache: CachedVectors, query: Float32Array, k: number): number[] {
  const scored: Array<[number, number]> = [];
  for (let row = 0; row < cache.size; row++) {
    let s = 0;
    for (let j = 0; j < D; j++) s += cache.matrix[row * D + j]! * query[j]!;
    scored.push([cache.ids[row]!, s]);
  }
  scored.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  return scored.slice(0, k).map(([id]) => id);
}

const corpus = new ClusteredCorpus({ dimensions: D, clusters: 40, spread: 1.0, querySpread: 0.6, seed: 3 });
function rowsFor(n: number, seq = 1, offset = 0) {
  return Array.from({ length: n }, (_, i) => {
    const vector = new Float32Array(D);
    corpus.passage(i + offset, vector);
    return { id: i + offset + 1, pageId: Math.floor((i + offset) / 5) + 1, seq, vector };
  });
}

/** Another process's writes: passage 7 moved onto a far-away direction (returned), 9 deleted, 50 passages added. */
function writtenElsewhere(before: ReturnType<typeof rowsFor>): { far: Float32Array; after: ReturnType<typeof rowsFor> } {
  const far = new Float32Array(D);
  far[0] = -1;
  const after = before
    .filter((r) => r.id !== 9)
    .map((r) => (r.id === 7 ? { ...r, seq: 2, vector: far } : r))
    .concat(rowsFor(50, 2, before.length));
  return { far, after };
}

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const o of open.splice(0)) await o.close();
});

describe('ApproximateSearch', () => {
  it('finds at least 95% of the exact top 10 on clustered vectors, with exact scores', async () => {
    const cache = cacheOf(rowsFor(4000));
    const ann = new ApproximateSearch({ dimensions: D, above: 1000, waitForBuild: true });
    open.push(ann);
    await ann.reloaded(null, cache);
    const truth: number[][] = [];
    const got: number[][] = [];
    for (let q = 0; q < 50; q++) {
      const query = corpus.query(q, 4000);
      const hits = await ann.search(cache, query, 10, Infinity);
      expect(hits).not.toBeNull();
      for (const hit of hits!) {
        const row = cache.position.get(hit.id)!;
        let s = 0;
        for (let j = 0; j < D; j++) s += cache.matrix[row * D + j]! * query[j]!;
        expect(hit.score).toBeCloseTo(s, 6);
      }
      truth.push(exactTop(cache, query, 10));
      got.push(hits!.map((h) => h.id));
    }
    expect(recallAtK(truth, got, 10)).toBeGreaterThanOrEqual(0.95);
    expect(ann.answered).toBe(50);
  });

  it('follows a reload: rows replaced, added and removed elsewhere reach the graph as a diff', async () => {
    const before = rowsFor(2000);
    const first = cacheOf(before);
    const ann = new ApproximateSearch({ dimensions: D, above: 100, waitForBuild: true });
    open.push(ann);
    await ann.reloaded(null, first);
    await ann.settled();
    const { far, after } = writtenElsewhere(before);
    const second = cacheOf(after);
    await ann.reloaded(first, second);
    expect(ann.state).toBe('ready'); // applied as a diff, not rebuilt
    const top = await ann.search(second, far, 1, Infinity);
    expect(top?.[0]).toMatchObject({ id: 7, score: expect.closeTo(1, 6) });
    const nine = new Float32Array(before[8]!.vector);
    const hits = await ann.search(second, nine, 10, Infinity);
    expect(hits?.map((h) => h.id)).not.toContain(9);
    const added = new Float32Array(after.at(-1)!.vector);
    expect((await ann.search(second, added, 1, Infinity))?.[0]?.id).toBe(after.at(-1)!.id);
  });

  it('answers null (exact scan) below the threshold, while building unless told to wait, and for unknown caches', async () => {
    const cache = cacheOf(rowsFor(1500));
    const small = new ApproximateSearch({ dimensions: D, above: 5000 });
    open.push(small);
    await small.reloaded(null, cache);
    expect(small.state).toBe('off');
    expect(await small.search(cache, corpus.query(1, 1500), 10, Infinity)).toBeNull();

    const ann = new ApproximateSearch({ dimensions: D, above: 1000 });
    open.push(ann);
    await ann.reloaded(null, cache);
    expect(ann.state).toBe('building');
    expect(await ann.search(cache, corpus.query(1, 1500), 10, Infinity)).toBeNull();
    await ann.settled();
    expect(ann.state).toBe('ready');
    expect(await ann.search(cache, corpus.query(1, 1500), 10, Infinity)).toHaveLength(10);
    expect(await ann.search(cacheOf(rowsFor(1500)), corpus.query(1, 1500), 10, Infinity)).toBeNull();
    // Shrinking below the threshold drops the graph.
    await ann.reloaded(cache, cacheOf(rowsFor(500)));
    expect(ann.state).toBe('off');
  });

  it('keeps at most perPage hits of one page, widening the candidate list when the cap needs it', async () => {
    // Every passage of page 1 lies on top of the query: the cap must reach past them.
    const rows = rowsFor(3000).map((r) => ({ ...r, pageId: r.id <= 400 ? 1 : r.pageId + 1000 }));
    const query = new Float32Array(D);
    query[1] = 1;
    for (const r of rows.slice(0, 400)) {
      r.vector = new Float32Array(D);
      r.vector[1] = 1;
      r.vector[2] = 0.001 * r.id;
      const n = Math.hypot(...r.vector);
      for (let j = 0; j < D; j++) r.vector[j] = r.vector[j]! / n;
    }
    const cache = cacheOf(rows);
    const ann = new ApproximateSearch({ dimensions: D, above: 100, waitForBuild: true });
    open.push(ann);
    await ann.reloaded(null, cache);
    const hits = (await ann.search(cache, query, 10, 2))!;
    expect(hits).toHaveLength(10);
    expect(hits.filter((h) => h.pageId === 1)).toHaveLength(2);
    expect(hits.slice(0, 2).map((h) => h.id)).toEqual([1, 2]);
    expect(new Set(hits.map((h) => h.pageId)).size).toBe(9);
  });
});

describe('AnnGraph', () => {
  it('replaces a key on upsert, forgets removed keys, and refuses work once closed', async () => {
    const graph = new AnnGraph({ dimensions: 4 });
    open.push(graph);
    expect(graph.state).toBe('empty');
    const rows = new Float32Array([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0]);
    await graph.build([10, 20, 30], rows, 3);
    expect(graph.state).toBe('ready');
    expect(await graph.search(new Float32Array([0, 1, 0, 0]), 1)).toEqual([20]);
    await graph.upsert([20], new Float32Array([0, 0, 0, 1]));
    expect(await graph.search(new Float32Array([0, 0, 0, 1]), 1)).toEqual([20]);
    await graph.remove([20]);
    expect((await graph.search(new Float32Array([0, 0, 0, 1]), 3)).sort()).toEqual([10, 30]);
    expect(await graph.bytes()).toBeGreaterThan(0);
    await graph.close();
    expect(graph.state).toBe('failed');
    await expect(graph.search(new Float32Array([1, 0, 0, 0]), 1)).rejects.toMatchObject({ code: 'internal_error' });
  });
});

describe('ApproximateSearch with a saved graph', () => {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const o of open.splice(0)) await o.close(); // first: a close saves what changed since the last save
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  function tempDir(): string {
    const d = mkdtempSync(path.join(tmpdir(), 'notary-ann-persist-'));
    dirs.push(d);
    return d;
  }
  /** What the instances told their log. */
  const told: string[] = [];
  function persisted(directory: string, model = 'm', graph: { connectivity?: number } = {}): ApproximateSearch {
    const log = (message: string) => void told.push(message);
    const ann = new ApproximateSearch({ dimensions: D, above: 100, waitForBuild: true, persist: { directory, model }, graph, log });
    open.push(ann);
    return ann;
  }
  const queries = Array.from({ length: 20 }, (_, q) => corpus.query(q, 600));
  /** The ids each query finds, and the searches the graph answered. */
  async function answers(ann: ApproximateSearch, cache: CachedVectors): Promise<number[][]> {
    const out: number[][] = [];
    for (const query of queries) out.push((await ann.search(cache, query, 10, Infinity))?.map((h) => h.id) ?? []);
    return out;
  }
  /** Builds and saves a graph of `rows`; returns its answers to `queries`. */
  async function savedOnce(directory: string, rows: ReturnType<typeof rowsFor>): Promise<number[][]> {
    const ann = persisted(directory);
    const cache = cacheOf(rows);
    await ann.reloaded(null, cache);
    await ann.settled();
    expect(ann).toMatchObject({ builds: 1, restores: 0, saves: 1 });
    const found = await answers(ann, cache);
    await ann.close();
    return found;
  }

  it('loads a saved graph without building and answers as the graph did before the restart', async () => {
    const directory = tempDir();
    const rows = rowsFor(600);
    const beforeRestart = await savedOnce(directory, rows);
    expect(readdirSync(directory).sort()).toEqual([expect.stringMatching(/^vectors-[0-9a-f]{16}-[0-9a-f]{12}\.usearch$/), expect.stringMatching(/^vectors-[0-9a-f]{16}\.manifest$/)]);

    const cache = cacheOf(rows);
    told.length = 0;
    const ann = persisted(directory);
    await ann.reloaded(null, cache);
    await ann.settled();
    expect(ann).toMatchObject({ builds: 0, restores: 1, saves: 0, restoreSkipped: null, state: 'ready' });
    expect(told).toEqual([expect.stringMatching(/^vector graph: loaded 600 vectors from .*\.usearch in \d+ ms; 0 changed since it was saved$/)]);
    // The same graph: the same answers as before the restart, and close to the exact scan's. The graph's build varies
    // from run to run (its recall here was 0.94 to 1 over 200 results); the 95% bar is the first test's, on 4,000 vectors.
    const afterRestart = await answers(ann, cache);
    expect(ann.answered).toBe(20);
    expect(afterRestart).toEqual(beforeRestart);
    expect(recallAtK(queries.map((q) => exactTop(cache, q, 10)), afterRestart, 10)).toBeGreaterThanOrEqual(0.9);
  });

  it('applies vectors written elsewhere between the save and the load as a diff', async () => {
    const directory = tempDir();
    const before = rowsFor(2000);
    await savedOnce(directory, before);
    const { far, after } = writtenElsewhere(before); // while this process was down
    const cache = cacheOf(after);
    const ann = new ApproximateSearch({ dimensions: D, above: 100, waitForBuild: true, persist: { directory, model: 'm' } });
    open.push(ann);
    await ann.reloaded(null, cache);
    await ann.settled();
    expect(ann).toMatchObject({ builds: 0, restores: 1 });
    expect((await ann.search(cache, far, 1, Infinity))?.[0]).toMatchObject({ id: 7, score: expect.closeTo(1, 6) });
    for (const added of after.slice(-50)) {
      expect((await ann.search(cache, new Float32Array(added.vector), 1, Infinity))?.[0]?.id).toBe(added.id);
    }
    // Saved again with the diff once closed: the next start has nothing left to apply.
    await ann.close();
    const saved = await ann.store!.read();
    expect('saved' in saved && saved.saved.vectors.size).toBe(after.length);
  });

  it('loads a saved graph whose sampled rows were all rewritten since (same vectors, new seqs): the diff covers them', async () => {
    const directory = tempDir();
    const rows = rowsFor(1600);
    await savedOnce(directory, rows);
    const rewritten = rows.map((r, i) => (i % 100 === 0 ? { ...r, seq: 2 } : r)); // rows 0, 100, ...: every sampled row
    const ann = persisted(directory);
    await ann.reloaded(null, cacheOf(rewritten));
    await ann.settled();
    expect(ann).toMatchObject({ builds: 0, restores: 1, restoreSkipped: null });
  });

  it('ignores a saved graph of another model or other graph options, and of another database, and builds', async () => {
    const directory = tempDir();
    const rows = rowsFor(600);
    await savedOnce(directory, rows);
    const options = persisted(directory, 'm', { connectivity: 16 });
    await options.reloaded(null, cacheOf(rows));
    await options.settled();
    expect(options).toMatchObject({ builds: 1, restores: 0 });
    expect(options.restoreSkipped).toMatch(/connectivity 32, expected 16/);
    await options.close(); // saved over the first: model m now has a connectivity-16 graph

    const other = persisted(directory, 'other');
    copyFileSync(options.store!.manifestFile, other.store!.manifestFile);
    await other.reloaded(null, cacheOf(rows));
    await other.settled();
    expect(other.restoreSkipped).toMatch(/model "m", expected "other"/);
    expect(other).toMatchObject({ builds: 1, restores: 0 });

    const dimensions = new AnnGraphStore(directory, { ...options.store!.identity, dimensions: D * 2 });
    copyFileSync(options.store!.manifestFile, dimensions.manifestFile);
    expect(await dimensions.read()).toEqual({ ignored: `saved graph built with dimensions ${D}, expected ${D * 2}` });

    // Same ids and write seqs, other vectors (another database): the sampled vectors tell.
    const foreign = persisted(directory, 'm', { connectivity: 16 });
    const shifted = rows.map((r, i) => ({ ...r, vector: rows[(i + 1) % rows.length]!.vector }));
    await foreign.reloaded(null, cacheOf(shifted));
    await foreign.settled();
    expect(foreign.restoreSkipped).toMatch(/other vectors: passage \d+ has another vector under the same write seq/);
    expect(foreign).toMatchObject({ builds: 1, restores: 0 });
  });

  it('builds when the graph file is truncated or corrupt, or the manifest is cut short', async () => {
    const directory = tempDir();
    const rows = rowsFor(600);
    await savedOnce(directory, rows);
    const store = new AnnGraphStore(directory, { model: 'm', dimensions: D, metric: 'cos', quantization: 'i8', connectivity: 32, expansionAdd: 128 });
    const found = await store.read();
    if (!('saved' in found)) throw new Error(found.ignored);
    const graphFile = found.saved.graph.file;
    const good = readFileSync(graphFile);
    const manifest = readFileSync(store.manifestFile);

    const damaged: Array<[string, () => void, RegExp]> = [
      ['truncated graph', () => writeFileSync(graphFile, good.subarray(0, good.length >> 1)), /is not the graph its manifest describes/],
      ['corrupt graph', () => writeFileSync(graphFile, Buffer.from(good).fill(0x55, 4096, 4200)), /is not the graph its manifest describes/],
      ['missing graph', () => rmSync(graphFile), /ENOENT/],
      ['truncated manifest', () => writeFileSync(store.manifestFile, manifest.subarray(0, manifest.length - 8)), /manifest has \d+ bytes, expected \d+/],
    ];
    for (const [what, damage, reason] of damaged) {
      writeFileSync(graphFile, good);
      writeFileSync(store.manifestFile, manifest);
      damage();
      const cache = cacheOf(rows);
      told.length = 0;
      const ann = persisted(directory);
      await ann.reloaded(null, cache);
      await ann.settled();
      expect(told).toEqual([expect.stringMatching(new RegExp(`^vector graph: building 600 vectors \\(.*${reason.source}`))]);
      expect({ what, skipped: ann.restoreSkipped, builds: ann.builds, restores: ann.restores }).toEqual({ what, skipped: expect.stringMatching(reason), builds: 1, restores: 0 });
      expect(recallAtK(queries.map((q) => exactTop(cache, q, 10)), await answers(ann, cache), 10)).toBeGreaterThanOrEqual(0.95);
      await ann.close();
    }
  });

  it('never shows a graph file under its final name before it is complete', async () => {
    const directory = tempDir();
    const cache = cacheOf(rowsFor(20_000));
    const ann = persisted(directory);
    await ann.reloaded(null, cache);
    // Once the build and the save are posted (after the look for a manifest), the worker builds, then saves while
    // this thread watches the folder; the manifest follows on this thread.
    while (ann.builds === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    const sizes = new Map<string, Set<number>>();
    const until = Date.now() + 50_000;
    let seenAt = 0;
    while (Date.now() < until && (seenAt === 0 || Date.now() - seenAt < 200)) {
      for (const name of readdirSync(directory)) {
        if (!name.endsWith('.usearch')) continue;
        const size = statSync(path.join(directory, name), { throwIfNoEntry: false })?.size;
        if (size === undefined) continue;
        seenAt ||= Date.now();
        sizes.set(name, (sizes.get(name) ?? new Set()).add(size));
      }
    }
    await ann.settled();
    expect(ann.saves).toBe(1);
    const [name, seen] = [...sizes][0]!;
    expect({ name, sizes: [...seen] }).toEqual({ name, sizes: [statSync(path.join(directory, name)).size] });
    expect(readdirSync(directory).filter((n) => n.includes('.tmp-'))).toEqual([]);
  }, 60_000);

  it('keeps serving when the graph cannot be saved, and says so', async () => {
    const blocked = path.join(tempDir(), 'not-a-folder');
    writeFileSync(blocked, 'a file where the folder should be');
    told.length = 0;
    const ann = persisted(blocked);
    const cache = cacheOf(rowsFor(600));
    await ann.reloaded(null, cache);
    await ann.settled();
    expect(ann).toMatchObject({ builds: 1, saves: 0, state: 'ready' });
    expect(told).toEqual([expect.stringMatching(/^vector graph: building 600 vectors/), expect.stringMatching(/^vector graph: not saved to .*not-a-folder \(.*(EEXIST|ENOTDIR)/)]);
    expect(await ann.search(cache, queries[0]!, 10, Infinity)).toHaveLength(10);
  });

  it('removes the saved graph when the collection falls below the threshold', async () => {
    const directory = tempDir();
    const rows = rowsFor(600);
    await savedOnce(directory, rows);
    const ann = persisted(directory);
    const cache = cacheOf(rows);
    await ann.reloaded(null, cache);
    await ann.settled();
    expect(ann.restores).toBe(1);
    await ann.reloaded(cache, cacheOf(rows.slice(0, 50)));
    expect(ann.state).toBe('off');
    expect(readdirSync(directory)).toEqual([]);
  });
});
