import { performance } from 'node:perf_hooks';
import { OnnxReranker, type GraphOptimizationLevel } from '../../reranker/index.js';
import { BenchArgsError } from './args.js';
import { loadAverage } from './machine.js';
import { round2 } from './stats.js';

/** One embedding setting: which ONNX file and how the texts are fed to it. */
export interface EmbeddingVariant {
  name: string;
  /** What it changes against the baseline, for the report. */
  lever: string;
  precision: 'fp32' | 'int8';
  /** Texts per embed() call (the indexer's embeddings.batch_size): the window sorted by length; 0 = the whole round. */
  window: number;
  /** Texts per ONNX run (reranker.batch_size); an int8 model runs one text per run unless batchQuantized. */
  batchSize: number;
  batchQuantized?: boolean;
  sortByLength: boolean;
  maxSeqLength: number;
  threads: number;
  /** Worker threads running a session each (reranker.workers); 0 = the calling thread. */
  workers: number;
  graphOptimizationLevel: GraphOptimizationLevel;
  /** ONNX Runtime threads busy-wait between operators (what notary shipped before reranker.spin_wait). */
  spinWait: boolean;
  /**
   * A copy of the fp32 model derived by scripts/quantize-minilm.sh with these flags (quantisation variants, offline
   * fusion), made once into the bench's model cache; absent: the shared fp32 model or the int8 copy by `precision`.
   */
  derived?: { tag: string; flags: string[] };
}

export interface EmbeddingVariantResult {
  name: string;
  lever: string;
  settings: Omit<EmbeddingVariant, 'name' | 'lever'>;
  onnx_file: string;
  passages: number;
  seconds: number;
  passages_per_s: number;
  /** passages_per_s over the baseline's, measured in the same rounds. */
  speedup: number;
  /** Cosine of each passage's vector with the baseline's vector of it (the exact fp32 model at 256 tokens). */
  cosine_vs_baseline: { min: number; mean: number; p01: number };
  /** Tokens fed to the model per passage, padding included, over real tokens (1 = no padding). */
  padding_factor: number | null;
}

export interface EmbeddingBench {
  passages: number;
  rounds: number;
  baseline: string;
  load_average: { start: [number, number, number]; end: [number, number, number] };
  variants: EmbeddingVariantResult[];
}

const BASE: Omit<EmbeddingVariant, 'name' | 'lever'> = {
  precision: 'fp32',
  window: 64,
  batchSize: 16,
  sortByLength: true,
  maxSeqLength: 256,
  threads: 2,
  workers: 0,
  graphOptimizationLevel: 'all',
  spinWait: true,
};

/** The setting notary ships: embeddings.precision int8 in reranker.workers threads (one per core), one ONNX thread each. */
export const SHIPPED_EMBEDDING_VARIANT = 'int8 2 workers';

/**
 * The settings measured side by side: the fp32 baseline notary shipped (the indexer's 64-passage calls sorted by
 * length into ONNX batches of 16, 256 tokens, graph optimisation "all", 2 spin-waiting threads), each lever changed
 * alone, and the int8 settings the product can ship, each again with one lever changed.
 */
export function embeddingVariants(only: readonly string[] = []): EmbeddingVariant[] {
  const v = (name: string, lever: string, over: Partial<EmbeddingVariant>): EmbeddingVariant => ({ ...BASE, ...over, name, lever });
  const int8 = (name: string, lever: string, over: Partial<EmbeddingVariant>): EmbeddingVariant =>
    v(name, lever, { precision: 'int8', batchSize: 1, spinWait: true, ...over });
  const all = [
    v('fp32 (before)', 'baseline: what notary shipped', {}),
    v('fp32 unsorted', 'padding: batches padded to the longest of arbitrary neighbours', { sortByLength: false }),
    v('fp32 sorted round', 'padding: sort the whole round of passages instead of windows of 64', { window: 0 }),
    v('fp32 batch 1', 'padding: one passage per run, no padding at all', { batchSize: 1 }),
    v('fp32 seq 128', 'sequence length 128 tokens', { maxSeqLength: 128 }),
    v('fp32 graph basic', 'ORT graph optimisation basic instead of all', { graphOptimizationLevel: 'basic' }),
    v('fp32 graph disabled', 'ORT graph optimisation disabled', { graphOptimizationLevel: 'disabled' }),
    v('fp32 1 thread', 'ORT intra-op threads 1 instead of 2', { threads: 1 }),
    v('fp32 no spin', 'ORT threads do not busy-wait between operators (reranker.spin_wait false)', { spinWait: false }),
    v('fp32 fused', 'offline fusion (attention, LayerNorm, GELU) by onnxruntime.transformers, fp32', { derived: { tag: 'fused', flags: ['--fuse', '--no-quantize'] } }),
    v('fp32 2 workers', 'two worker threads with a one-thread session each instead of one session with two threads', { workers: 2, threads: 1 }),
    int8(SHIPPED_EMBEDDING_VARIANT, 'quantisation: int8 (dynamic), one passage per run, in two worker threads of one ONNX thread each: what notary ships', { workers: 2, threads: 1 }),
    int8('int8 batch 1', 'int8 (dynamic), one passage per run, one session of 2 spin-waiting threads in the calling thread (shipped before reranker.workers)', {}),
    int8('int8 batch 1 no spin', 'int8 shipped without spin-waiting (reranker.spin_wait false: faster only on cores busy with other work)', { spinWait: false }),
    int8('int8 1 thread', 'int8 shipped, 1 intra-op thread', { threads: 1 }),
    int8('int8 batch 16 sorted round', 'int8 shipped but batched (vectors then depend on batch neighbours)', { batchSize: 16, batchQuantized: true, window: 0 }),
    int8('int8 seq 128', 'int8 in the calling thread and 128 tokens', { maxSeqLength: 128 }),
    int8('int8 2 workers seq 128', 'int8 shipped and 128 tokens (reranker.max_seq_length 128: cuts long passages, so it changes their vectors)', { workers: 2, threads: 1, maxSeqLength: 128 }),
    int8('int8 u8 weights', 'int8 shipped with unsigned weights (QUInt8)', { derived: { tag: 'int8-u8', flags: ['--weight-type', 'u8'] } }),
    int8('int8 per-tensor', 'int8 shipped with one weight scale per tensor', { derived: { tag: 'int8-per-tensor', flags: ['--per-tensor'] } }),
    int8('int8 reduce range', 'int8 shipped with 7-bit weights (reduce_range)', { derived: { tag: 'int8-rr', flags: ['--reduce-range'] } }),
    int8('int8 fused', 'offline fusion then int8 (QAttention)', { derived: { tag: 'fused-int8', flags: ['--fuse'] } }),
    int8('int8 fused u8', 'offline fusion then int8 with unsigned weights', { derived: { tag: 'fused-int8-u8', flags: ['--fuse', '--weight-type', 'u8'] } }),
  ];
  if (only.length === 0) return all;
  const unknown = only.filter((name) => !all.some((variant) => variant.name === name));
  if (unknown.length > 0) throw new BenchArgsError(`--embed-settings: unknown: ${unknown.join(', ')}; known: ${all.map((variant) => variant.name).join(', ')}`);
  // The baseline always runs first: every speed-up is measured against it.
  return all.filter((variant, i) => i === 0 || only.includes(variant.name));
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return dot / Math.sqrt(na * nb);
}

/** Tokens fed (padding included) over real tokens, round by round as the variant was run. */
function paddingFactor(lengths: readonly number[], variant: EmbeddingVariant, roundSize: number): number {
  let real = 0;
  let fed = 0;
  for (let from = 0; from < lengths.length; from += roundSize) {
    const round = lengths.slice(from, from + roundSize);
    const counted = paddingFactorIn(round, variant, variant.window > 0 ? variant.window : round.length);
    real += counted.real;
    fed += counted.fed;
  }
  return real > 0 ? round2(fed / real) : 1;
}

function paddingFactorIn(lengths: readonly number[], variant: EmbeddingVariant, windowSize: number): { real: number; fed: number } {
  let real = 0;
  let fed = 0;
  for (let start = 0; start < lengths.length; start += windowSize) {
    const window = lengths.slice(start, start + windowSize).map((n) => Math.min(n, variant.maxSeqLength));
    const order = variant.sortByLength ? [...window].sort((a, b) => a - b) : window;
    const perRun = variant.precision === 'int8' && !variant.batchQuantized ? 1 : variant.batchSize;
    for (let b = 0; b < order.length; b += perRun) {
      const batch = order.slice(b, b + perRun);
      real += batch.reduce((sum, n) => sum + n, 0);
      fed += Math.max(...batch) * batch.length;
    }
  }
  return { real, fed };
}

/**
 * Embeds the same passages with every variant, interleaved: the passages are cut into rounds, and in each round every
 * variant embeds the round's passages (in a rotating order), so a shared machine's changing load falls on all alike.
 */
export async function measureEmbedding(input: {
  fp32Dir: string;
  int8Dir: string;
  /** Model folder of each derived variant, by its tag. */
  derivedDirs?: ReadonlyMap<string, string>;
  texts: readonly string[];
  variants: readonly EmbeddingVariant[];
  roundSize: number;
  log: (msg: string) => void;
}): Promise<EmbeddingBench> {
  const start = loadAverage();
  // One ONNX session at a time (loaded, warmed up, timed on the round, released): eleven fp32 sessions with their
  // memory arenas side by side were enough to get a benchmark killed on a shared 24 GB machine.
  const dirOf = (variant: EmbeddingVariant): string => {
    if (!variant.derived) return variant.precision === 'int8' ? input.int8Dir : input.fp32Dir;
    const dir = input.derivedDirs?.get(variant.derived.tag);
    if (!dir) throw new Error(`no model folder for the derived variant ${variant.derived.tag}`);
    return dir;
  };
  const load = (variant: EmbeddingVariant) =>
    OnnxReranker.load(dirOf(variant), {
      threads: variant.threads,
      workers: variant.workers,
      spinWait: variant.spinWait,
      batchSize: variant.batchSize,
      maxSeqLength: variant.maxSeqLength,
      graphOptimizationLevel: variant.graphOptimizationLevel,
      sortByLength: variant.sortByLength,
      batchQuantized: variant.batchQuantized ?? false,
      source: 'bench',
    });
  const onnxFiles = input.variants.map(() => '');
  let lengths: number[] = [];
  {
    const variants = input.variants;
    const vectors = variants.map(() => new Array<Float32Array>(input.texts.length));
    const ms = variants.map(() => 0);
    const rounds = Math.ceil(input.texts.length / input.roundSize);
    for (let round = 0; round < rounds; round++) {
      const from = round * input.roundSize;
      const texts = input.texts.slice(from, from + input.roundSize);
      for (let k = 0; k < variants.length; k++) {
        const i = (round + k) % variants.length;
        const variant = variants[i] as EmbeddingVariant;
        const model = await load(variant);
        try {
          if (lengths.length === 0) lengths = input.texts.map((text) => model.tokenCount(text));
          onnxFiles[i] = model.onnxPath;
          await model.embed(texts.slice(0, 4)); // warm-up
          const t0 = performance.now();
          const window = variant.window > 0 ? variant.window : texts.length;
          for (let w = 0; w < texts.length; w += window) {
            const out = await model.embed(texts.slice(w, w + window));
            out.forEach((vec, j) => ((vectors[i] as Float32Array[])[from + w + j] = vec));
          }
          ms[i] = (ms[i] ?? 0) + performance.now() - t0;
        } finally {
          await model.close();
        }
      }
      input.log(`embedding: round ${round + 1}/${rounds} (${Math.min(from + input.roundSize, input.texts.length)} passages), load ${loadAverage()[0]}`);
    }
    const baseline = vectors[0] as Float32Array[];
    const baseRate = input.texts.length / ((ms[0] ?? 1) / 1000);
    const results = input.variants.map((variant, i): EmbeddingVariantResult => {
      const cos = (vectors[i] as Float32Array[]).map((vec, j) => cosine(vec, baseline[j] as Float32Array)).sort((a, b) => a - b);
      const rate = input.texts.length / ((ms[i] ?? 1) / 1000);
      const { name, lever, ...settings } = variant;
      return {
        name,
        lever,
        settings,
        onnx_file: onnxFiles[i] ?? '',
        passages: input.texts.length,
        seconds: round2((ms[i] ?? 0) / 1000),
        passages_per_s: round2(rate),
        speedup: round2(rate / baseRate),
        cosine_vs_baseline: {
          min: Math.round((cos[0] ?? 0) * 1e6) / 1e6,
          mean: Math.round((cos.reduce((s, c) => s + c, 0) / Math.max(1, cos.length)) * 1e6) / 1e6,
          p01: Math.round((cos[Math.floor(cos.length * 0.01)] ?? 0) * 1e6) / 1e6,
        },
        padding_factor: paddingFactor(lengths, variant, input.roundSize),
      };
    });
    return { passages: input.texts.length, rounds, baseline: input.variants[0]?.name ?? '', load_average: { start, end: loadAverage() }, variants: results };
  }
}
