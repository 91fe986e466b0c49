import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import type * as ort from 'onnxruntime-node';
import { NotaryError } from '../core/index.js';
import { detectModelKind, EMBEDDING_OUTPUTS, findOnnxFile, isDynamicallyQuantized, readModelConfig, type OnnxModelKind } from './model-folder.js';
import { openOnnxRunner, type OnnxFeed, type OnnxOutput, type OnnxRunner } from './onnx-runner.js';
import { clampUnit, cosineToUnit, dot, l2Normalize, meanPoolNormalize, sigmoid } from './pooling.js';
import type { Embedder } from './embedder.js';
import type { Reranker, RerankerInfo } from './reranker.js';
import { sha256File } from './sha256.js';
import { BertPairTokenizer, type EncodedInput } from './tokenizer.js';

export type GraphOptimizationLevel = 'disabled' | 'basic' | 'extended' | 'all';

/** The sequence length embedder ids leave unsaid (reranker.max_seq_length's default). */
export const STANDARD_MAX_SEQ_LENGTH = 256;

const SUPPORTED_INPUTS = new Set(['input_ids', 'attention_mask', 'token_type_ids']);
export interface OnnxRerankerOptions {
  /** Intra-op threads of each ONNX session. */
  threads: number;
  /**
   * Worker threads that run the model, each with a session of its own (0, the default: the calling thread, which
   * onnxruntime-node blocks for the whole run). Texts of one call are spread over the workers.
   */
  workers?: number;
  batchSize: number;
  maxSeqLength: number;
  /** .onnx file relative to the model directory; found automatically when absent. */
  onnxFile?: string;
  /** RerankerInfo.source, e.g. "config". */
  source: string;
  /** Model name for RerankerInfo.model; the directory's name when absent. */
  name?: string;
  /** RerankerInfo.why: how this model came to be chosen. */
  why?: string;
  /** ONNX Runtime graph optimisation level (default all: every fusion ORT knows for the CPU). */
  graphOptimizationLevel?: GraphOptimizationLevel;
  /**
   * Let ONNX Runtime's intra-op threads busy-wait for the next operator (its own default). Off by default: on a
   * machine whose cores other processes use too, spinning threads burn the time slices the working thread needs;
   * turning it off embedded 1.3–2.4x as fast here (docs/dense-retrieval.md, Embedding speed).
   */
  spinWait?: boolean;
  /**
   * Group texts of similar token length into a batch (default true), so a batch is padded to little more than its
   * own length; false keeps the order given (padding to the longest of arbitrary neighbours), for measurements.
   */
  sortByLength?: boolean;
  /**
   * Batch a dynamically quantised (int8) model too. Off by default: such a model quantises each run's activations
   * with one scale for the whole batch, so a pair's score would depend on its batch neighbours (seen: up to 8e-4
   * here), and on these CPUs one pair per run was also faster (106 vs 93 pairs/s at ~125 tokens).
   */
  batchQuantized?: boolean;
}

/** The ONNX Runtime session options for `options` (threads, graph level, spin-waiting). */
export function onnxSessionOptions(
  options: Pick<OnnxRerankerOptions, 'threads' | 'graphOptimizationLevel' | 'spinWait'>,
): ort.InferenceSession.SessionOptions {
  const spinning = options.spinWait ? '1' : '0';
  return {
    intraOpNumThreads: options.threads,
    interOpNumThreads: 1,
    graphOptimizationLevel: options.graphOptimizationLevel ?? 'all',
    // Session config entries (onnxruntime_session_options_config_keys.h), which the Node binding passes through.
    extra: { session: { intra_op: { allow_spinning: spinning }, inter_op: { allow_spinning: spinning } } },
  };
}

interface Batch {
  feeds: Record<string, OnnxFeed>;
  mask: BigInt64Array;
  seqLength: number;
}

/** Scores with an ONNX BERT model: sigmoid of a cross-encoder's logit, or (cos+1)/2 of bi-encoder embeddings. */
export class OnnxReranker implements Reranker {
  readonly info: RerankerInfo;
  private closed = false;

  private constructor(
    private readonly runner: OnnxRunner,
    private readonly tokenizer: BertPairTokenizer,
    readonly kind: OnnxModelKind,
    /** Pairs per session run actually used (1 for a dynamically quantised model unless batchQuantized). */
    readonly batchSize: number,
    readonly maxSeqLength: number,
    info: RerankerInfo,
    readonly onnxPath: string,
    readonly quantized: boolean,
    private readonly sortByLength: boolean,
  ) {
    this.info = info;
  }

  /** Loads tokenizer.json, config.json and an .onnx file from `dir`; any problem is a model_unavailable error. */
  static async load(dir: string, options: OnnxRerankerOptions): Promise<OnnxReranker> {
    if (!existsSync(dir) || !statSync(dir).isDirectory()) {
      throw new NotaryError('model_unavailable', `model directory ${dir} does not exist`);
    }
    if (!existsSync(path.join(dir, 'tokenizer.json'))) {
      throw new NotaryError('model_unavailable', `model directory ${dir} has no tokenizer.json`);
    }
    const modelConfig = readModelConfig(dir);
    const onnxPath = findOnnxFile(dir, options.onnxFile);
    const tokenizer = BertPairTokenizer.fromDir(dir);
    const runner = await openOnnxRunner(onnxPath, onnxSessionOptions(options), options.workers ?? 0);
    try {
      const unknownInputs = runner.inputNames.filter((name) => !SUPPORTED_INPUTS.has(name));
      if (unknownInputs.length > 0 || !runner.inputNames.includes('input_ids')) {
        throw new NotaryError(
          'model_unavailable',
          `ONNX model ${onnxPath} wants inputs ${runner.inputNames.join(', ')}; supported are ${[...SUPPORTED_INPUTS].join(', ')}`,
        );
      }
      const kind = detectModelKind(modelConfig, runner.outputNames);
      const name = options.name ?? path.basename(path.resolve(dir));
      const precision = isDynamicallyQuantized(onnxPath) ? 'int8' : 'fp32';
      const info: RerankerInfo = {
        kind,
        model: `${name} (${path.resolve(dir)})`,
        source: options.source,
        why: `${options.why ?? `from ${options.source}`}; ${precision}, ${path.relative(dir, onnxPath)}`,
      };
      const quantized = isDynamicallyQuantized(onnxPath);
      const batchSize = quantized && !options.batchQuantized ? 1 : Math.max(1, Math.floor(options.batchSize));
      return new OnnxReranker(runner, tokenizer, kind, batchSize, options.maxSeqLength, info, onnxPath, quantized, options.sortByLength ?? true);
    } catch (err) {
      await runner.release();
      throw err;
    }
  }

  async score(query: string, passages: readonly string[]): Promise<number[]> {
    if (this.closed) throw new NotaryError('service_unavailable', 'the reranker has been closed');
    if (passages.length === 0) return [];
    return this.kind === 'cross-encoder' ? this.scoreCross(query, passages) : this.scoreBi(query, passages);
  }

  /** Threads the model runs in at once (its worker threads, or 1 in the calling thread). */
  get parallelism(): number {
    return this.runner.parallelism;
  }

  /** Worker threads running the model: at least `count` from now on (a model run in the calling thread keeps that). */
  async growWorkers(count: number): Promise<void> {
    await this.runner.growTo?.(count);
  }

  /** Lowers the CPU priority of this model's worker threads to nice `value`; false where it could not (no workers). */
  async lowerPriority(value: number): Promise<boolean> {
    return (await this.runner.lowerPriority?.(value)) ?? false;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.runner.release();
  }

  /**
   * Cross-encoders: scores of (query, passage) pairs of any queries, in order, in as few runs as batch_size allows
   * (pairs of similar length together, each run padded to its longest pair). What a batcher of concurrent searches calls.
   */
  async scorePairs(pairs: ReadonlyArray<{ query: string; passage: string }>): Promise<number[]> {
    if (this.closed) throw new NotaryError('service_unavailable', 'the reranker has been closed');
    if (this.kind !== 'cross-encoder') throw new NotaryError('model_unavailable', 'only a cross-encoder scores pairs of different queries');
    if (pairs.length === 0) return [];
    const queryIds = new Map<string, number[]>();
    const encoded = pairs.map(({ query, passage }) => {
      let ids = queryIds.get(query);
      if (!ids) queryIds.set(query, (ids = this.tokenizer.tokenIds(query)));
      return this.tokenizer.encodePair(query, passage, this.maxSeqLength, ids);
    });
    return this.scoreEncoded(encoded);
  }

  /** Tokens the model reads for the pair (query, passage): special tokens included, cut at max_seq_length. */
  pairTokenCount(query: string, passage: string): number {
    return this.tokenizer.encodePair(query, passage, this.maxSeqLength).inputIds.length;
  }

  /** Content tokens of `text` (no special tokens, no cut): what it adds to a pair. */
  textTokens(text: string): number {
    return this.tokenizer.tokenIds(text).length;
  }

  /** Special tokens the model's pair template adds ([CLS] A [SEP] B [SEP]: 3). */
  get pairSpecialTokens(): number {
    return this.tokenizer.pairSpecialTokens;
  }

  private async scoreCross(query: string, passages: readonly string[]): Promise<number[]> {
    const queryIds = this.tokenizer.tokenIds(query);
    return this.scoreEncoded(passages.map((passage) => this.tokenizer.encodePair(query, passage, this.maxSeqLength, queryIds)));
  }

  private async scoreEncoded(encoded: readonly EncodedInput[]): Promise<number[]> {
    const scores = new Array<number>(encoded.length).fill(0);
    // Every batch is handed to the runner at once: its workers take them as they come free.
    await Promise.all(
      this.batchesByLength(encoded).map(async (indices) => {
        const output = await this.run(this.buildBatch(indices.map((i) => encoded[i] as EncodedInput)), 'logits');
        const labels = output.dims[1] ?? 1;
        indices.forEach((original, row) => {
          scores[original] = labels <= 1 ? sigmoid(output.data[row] ?? Number.NaN) : lastLabelProbability(output.data, row * labels, labels);
        });
      }),
    );
    return scores;
  }

  /**
   * The model as an Embedder (bi-encoders only): unit vectors, identified by the model's name and the sha256 of its
   * .onnx file, so vectors from another export are never mixed with these.
   */
  async embedder(): Promise<Embedder> {
    if (this.kind !== 'bi-encoder') throw new NotaryError('model_unavailable', `${this.info.model} is a cross-encoder; dense retrieval needs a bi-encoder`);
    const digest = (await sha256File(this.onnxPath)).slice(0, 16);
    const [probe] = await this.embed(['dimension probe']);
    const name = path.basename(path.dirname(this.onnxPath)) === 'onnx' ? path.basename(path.dirname(path.dirname(this.onnxPath))) : path.basename(path.dirname(this.onnxPath));
    // Vectors depend on where passages are cut: another sequence length gets another id, so stored vectors of two
    // lengths never mix (the model's own maximum, 256 for all-MiniLM-L6-v2, keeps the plain id).
    const cut = this.maxSeqLength === STANDARD_MAX_SEQ_LENGTH ? '' : `+seq${this.maxSeqLength}`;
    return {
      model: `${name}@sha256:${digest}${cut}`,
      dimensions: probe?.length ?? 0,
      embed: (texts) => this.embed(texts),
    };
  }

  /** Tokens the model sees for `text` alone (special tokens included, up to 512). */
  tokenCount(text: string): number {
    return this.tokenizer.encodeSingle(text, 512).inputIds.length;
  }

  /** Unit-length embeddings of `texts` (bi-encoders only), in order. */
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    if (this.closed) throw new NotaryError('service_unavailable', 'the reranker has been closed');
    if (this.kind !== 'bi-encoder') throw new NotaryError('model_unavailable', 'only a bi-encoder model embeds texts');
    if (texts.length === 0) return [];
    return (await this.embedAll(texts)).map((v) => Float32Array.from(v));
  }

  private async scoreBi(query: string, passages: readonly string[]): Promise<number[]> {
    const embeddings = await this.embedAll([query, ...passages]);
    const queryEmbedding = embeddings[0] ?? new Float64Array();
    return passages.map((_, i) => cosineToUnit(dot(queryEmbedding, embeddings[i + 1] ?? new Float64Array())));
  }

  private async embedAll(texts: readonly string[]): Promise<Float64Array[]> {
    const encoded = texts.map((text) => this.tokenizer.encodeSingle(text, this.maxSeqLength));
    const embeddings = new Array<Float64Array>(texts.length);
    await Promise.all(
      this.batchesByLength(encoded).map(async (indices) => {
        const batch = this.buildBatch(indices.map((i) => encoded[i] as EncodedInput));
        const { mask, seqLength } = batch;
        const output = await this.run(batch, ...EMBEDDING_OUTPUTS);
        indices.forEach((original, row) => {
          if (output.dims.length === 2) {
            const dim = output.dims[1] ?? 0;
            embeddings[original] = l2Normalize(output.data.subarray(row * dim, (row + 1) * dim));
          } else {
            const dim = output.dims[2] ?? 0;
            embeddings[original] = meanPoolNormalize(output.data, mask, seqLength, dim, row * seqLength * dim, row * seqLength);
          }
        });
      }),
    );
    return embeddings;
  }

  /** Groups indices into batches of similar length, so padding to the longest in a batch wastes little. */
  private batchesByLength(encoded: readonly EncodedInput[]): number[][] {
    const order = encoded.map((_, i) => i);
    if (this.sortByLength) order.sort((a, b) => (encoded[a]?.inputIds.length ?? 0) - (encoded[b]?.inputIds.length ?? 0) || a - b);
    const batches: number[][] = [];
    for (let start = 0; start < order.length; start += this.batchSize) batches.push(order.slice(start, start + this.batchSize));
    return batches;
  }

  private buildBatch(rows: readonly EncodedInput[]): Batch {
    const seqLength = Math.max(1, ...rows.map((row) => row.inputIds.length));
    const size = rows.length * seqLength;
    const ids = new BigInt64Array(size).fill(BigInt(this.tokenizer.padId));
    const mask = new BigInt64Array(size);
    const types = new BigInt64Array(size);
    rows.forEach((row, r) => {
      const base = r * seqLength;
      for (let t = 0; t < row.inputIds.length; t++) {
        ids[base + t] = BigInt(row.inputIds[t] ?? 0);
        mask[base + t] = 1n;
        types[base + t] = BigInt(row.tokenTypeIds[t] ?? 0);
      }
    });
    const dims = [rows.length, seqLength];
    const available: Record<string, OnnxFeed> = {
      input_ids: { data: ids, dims },
      attention_mask: { data: mask, dims },
      token_type_ids: { data: types, dims },
    };
    const feeds: Record<string, OnnxFeed> = {};
    for (const name of this.runner.inputNames) {
      const feed = available[name];
      if (feed) feeds[name] = feed;
    }
    // The runner may move the feeds' buffers to a worker thread; pooling reads the mask afterwards.
    if (feeds['attention_mask']) feeds['attention_mask'] = { data: mask.slice(), dims };
    return { feeds, mask, seqLength };
  }

  private run(batch: Batch, ...wanted: string[]): Promise<OnnxOutput> {
    if (this.closed) return Promise.reject(new NotaryError('service_unavailable', 'the reranker has been closed'));
    const outputName = wanted.find((name) => this.runner.outputNames.includes(name)) ?? this.runner.outputNames[0];
    if (outputName === undefined) return Promise.reject(new NotaryError('model_unavailable', 'the ONNX model has no outputs'));
    return this.runner.run(batch.feeds, outputName);
  }
}

/** Softmax probability of the last label (the "relevant" class of two-label cross-encoders). */
function lastLabelProbability(data: Float32Array, offset: number, labels: number): number {
  let max = -Infinity;
  for (let i = 0; i < labels; i++) max = Math.max(max, data[offset + i] ?? -Infinity);
  let sum = 0;
  for (let i = 0; i < labels; i++) sum += Math.exp((data[offset + i] ?? -Infinity) - max);
  return clampUnit(Math.exp((data[offset + labels - 1] ?? -Infinity) - max) / sum);
}
