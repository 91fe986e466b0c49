import { DOT_WASM_BASE64 } from './dot-wasm.js';

const WASM_PAGE = 65_536;
/** Rows are scanned 8 floats at a time (two SIMD lanes of 4). */
const SIMD_STEP = 8;

/** The part of the WebAssembly JavaScript API used here (the project's TypeScript libs do not declare it). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Memory: new (descriptor: { initial: number }) => WasmMemory;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
}
const wasm = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;

let compiled: object | null | undefined;

function dotModule(): object | null {
  if (compiled === undefined) {
    try {
      if (!wasm) throw new Error('no WebAssembly');
      compiled = new wasm.Module(Buffer.from(DOT_WASM_BASE64, 'base64'));
    } catch {
      compiled = null; // no WebAssembly SIMD in this runtime: the JavaScript loop scans
    }
  }
  return compiled;
}

type ScanFn = (matrix: number, rows: number, dimensions: number, query: number, out: number) => void;

/** The int8 first pass takes 16 int8s at a time. */
const APPROX_STEP = 16;

/** Where the parts of the block begin (bytes), for `rows` rows of `d` dimensions. */
function layout(rows: number, d: number): { query: number; out: number; int8: number; query16: number; int32: number; end: number } {
  const align = (n: number) => Math.ceil(n / 16) * 16;
  const query = rows * d * 4;
  const out = query + d * 4;
  const int8 = align(out + rows * 4);
  const query16 = align(int8 + rows * d);
  const int32 = align(query16 + d * 2);
  return { query, out, int8, query16, int32, end: int32 + rows * 4 };
}

/**
 * The int8 first pass over every row: exact integer dot products of the rows' int8 copies with the query's, and what
 * bounds their distance to the float scan's scores (search/pruned-scan.ts). Row r's copy is round(v / scale[r]), each
 * element within scale[r] / 2 of v's, and l1[r] is the sum of its absolute values; the query's likewise.
 */
export interface ApproximateScores {
  dots: Int32Array;
  scale: Float64Array;
  l1: Float64Array;
  /** scale[r] * l1[r]. */
  scaledL1: Float64Array;
  queryScale: number;
  queryL1: number;
  /** The largest absolute element of the query. */
  queryMax: number;
}

/**
 * Rows of `dimensions` float32s in one growable block, scored against a query vector in one pass: with WebAssembly
 * SIMD (indexer/wasm/dot.wat) when the runtime has it and `dimensions` is a multiple of 8, else with a JavaScript
 * loop. `matrix` is a view of the rows; it is replaced when the block grows, so never keep it across `reserve`.
 * Memory layout: rows from byte 0, then the query, then the scores.
 */
export class VectorMatrix {
  matrix: Float32Array;
  private memory: WasmMemory | null = null;
  private scan: ScanFn | null = null;
  private approxScan: ScanFn | null = null;
  private rows: number;
  /** Each row's int8 copy: its scale and the sum of its absolute values (NaN scale: a row with a non-finite value). */
  private scale: Float64Array;
  private l1: Float64Array;
  private scaledL1: Float64Array;
  /** Rows whose int8 copy is out of date (every row when `allStale`). */
  private readonly stale = new Set<number>();
  private allStale = true;

  constructor(
    readonly dimensions: number,
    capacity: number,
    options: { simd?: boolean } = {},
  ) {
    this.rows = Math.max(1, capacity);
    const module = options.simd === false || dimensions % SIMD_STEP !== 0 ? null : dotModule();
    if (module && wasm) {
      try {
        const memory = new wasm.Memory({ initial: this.pagesFor(this.rows) });
        const instance = new wasm.Instance(module, { env: { memory } });
        this.scan = instance.exports['scores'] as ScanFn;
        if (dimensions % APPROX_STEP === 0) this.approxScan = instance.exports['approx'] as ScanFn;
        this.memory = memory;
      } catch {
        this.memory = null; // e.g. more than WebAssembly's 4 GiB: plain arrays
      }
    }
    this.matrix = this.memory ? new Float32Array(this.memory.buffer, 0, this.rows * dimensions) : new Float32Array(this.rows * dimensions);
    this.scale = new Float64Array(this.rows);
    this.l1 = new Float64Array(this.rows);
    this.scaledL1 = new Float64Array(this.rows);
  }

  /** Row `row` was (or is about to be) written: its int8 copy is made again before the next first pass. */
  changed(row: number): void {
    if (!this.allStale) this.stale.add(row);
  }

  /** True when scans run in WebAssembly SIMD. */
  get simd(): boolean {
    return this.memory !== null;
  }

  get capacity(): number {
    return this.rows;
  }

  private pagesFor(rows: number): number {
    return Math.ceil(layout(rows, this.dimensions).end / WASM_PAGE);
  }

  /** Room for at least `rows` rows, the existing ones kept. */
  reserve(rows: number): void {
    if (rows <= this.rows) return;
    const next = Math.max(rows, this.rows * 2);
    if (this.memory) {
      const missing = this.pagesFor(next) - this.memory.buffer.byteLength / WASM_PAGE;
      try {
        if (missing > 0) this.memory.grow(missing);
        this.rows = next;
        this.matrix = new Float32Array(this.memory.buffer, 0, next * this.dimensions);
        this.resizeCopies(next);
        return;
      } catch {
        // Past WebAssembly's memory limit: continue in a plain array.
        this.memory = null;
        this.scan = null;
        this.approxScan = null;
      }
    }
    const matrix = new Float32Array(next * this.dimensions);
    matrix.set(this.matrix.subarray(0, this.rows * this.dimensions));
    this.rows = next;
    this.matrix = matrix;
    this.resizeCopies(next);
  }

  /** The int8 copies move when the block grows: all are made again at the next first pass. */
  private resizeCopies(rows: number): void {
    this.scale = new Float64Array(rows);
    this.l1 = new Float64Array(rows);
    this.scaledL1 = new Float64Array(rows);
    this.allStale = true;
    this.stale.clear();
  }

  /** True when the int8 first pass runs here (WebAssembly SIMD, dimensions a multiple of 16). */
  get approximates(): boolean {
    return this.memory !== null && this.approxScan !== null;
  }

  /**
   * The int8 first pass over rows [0, size) (null where it does not run: see `approximates`). Its `dots` is a view
   * valid until the next call of approximate, scores, scoreRows or reserve.
   */
  approximate(query: Float32Array, size: number): ApproximateScores | null {
    const memory = this.memory;
    const run = this.approxScan;
    if (!memory || !run) return null;
    const d = this.dimensions;
    const at = layout(this.rows, d);
    const int8 = new Int8Array(memory.buffer, at.int8, this.rows * d);
    if (this.allStale) {
      for (let row = 0; row < size; row++) this.quantize(row, int8);
      this.allStale = false;
    } else {
      for (const row of this.stale) if (row < size) this.quantize(row, int8);
    }
    this.stale.clear();
    let queryMax = 0;
    for (let j = 0; j < d; j++) queryMax = Math.max(queryMax, Math.abs(query[j]!));
    if (!Number.isFinite(queryMax)) return null;
    const query16 = new Int16Array(memory.buffer, at.query16, d);
    const inverse = queryMax > 0 ? 127 / queryMax : 0;
    let queryL1 = 0;
    for (let j = 0; j < d; j++) {
      const k = Math.max(-127, Math.min(127, Math.round(query[j]! * inverse)));
      query16[j] = k;
      queryL1 += Math.abs(k);
    }
    run(at.int8, size, d, at.query16, at.int32);
    return { dots: new Int32Array(memory.buffer, at.int32, size), scale: this.scale, l1: this.l1, scaledL1: this.scaledL1, queryScale: queryMax / 127, queryL1, queryMax };
  }

  private quantize(row: number, int8: Int8Array): void {
    const d = this.dimensions;
    const m = this.matrix;
    const base = row * d;
    let max = 0;
    for (let j = 0; j < d; j++) max = Math.max(max, Math.abs(m[base + j]!));
    if (!Number.isFinite(max)) {
      // NaN or an infinity: no bound holds, the row is always scored exactly.
      this.scale[row] = Number.NaN;
      this.l1[row] = 0;
      this.scaledL1[row] = 0;
      int8.fill(0, base, base + d);
      return;
    }
    const inverse = max > 0 ? 127 / max : 0;
    let l1 = 0;
    for (let j = 0; j < d; j++) {
      const c = Math.max(-127, Math.min(127, Math.round(m[base + j]! * inverse)));
      int8[base + j] = c;
      l1 += Math.abs(c);
    }
    this.scale[row] = max / 127;
    this.l1[row] = l1;
    this.scaledL1[row] = (max / 127) * l1;
  }

  /**
   * The float scan's scores of these rows only, written to out[row] (the same operations as `scores`, so the same
   * values); rows not listed keep what `out` held.
   */
  scoreRows(query: Float32Array, rows: Iterable<number>, out: Float32Array): void {
    const memory = this.memory;
    const scan = this.scan;
    const d = this.dimensions;
    if (!memory || !scan) {
      const all = this.scores(query, this.rows);
      for (const row of rows) out[row] = all[row]!;
      return;
    }
    const at = layout(this.rows, d);
    new Float32Array(memory.buffer, at.query, d).set(query);
    const scores = new Float32Array(memory.buffer, at.out, this.rows);
    for (const row of rows) {
      scan(row * d * 4, 1, d, at.query, at.out + row * 4);
      out[row] = scores[row]!;
    }
  }

  /** Dot products of `query` with rows [0, size): a view valid until the next call of scores or reserve. */
  scores(query: Float32Array, size: number): Float32Array {
    const d = this.dimensions;
    if (this.memory && this.scan) {
      const queryAt = this.rows * d * 4;
      const outAt = queryAt + d * 4;
      new Float32Array(this.memory.buffer, queryAt, d).set(query);
      this.scan(0, size, d, queryAt, outAt);
      return new Float32Array(this.memory.buffer, outAt, size);
    }
    const m = this.matrix;
    const out = new Float32Array(size);
    const tail = d - (d % 4);
    for (let row = 0, base = 0; row < size; row++, base += d) {
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      let j = 0;
      for (; j < tail; j += 4) {
        s0 += m[base + j]! * query[j]!;
        s1 += m[base + j + 1]! * query[j + 1]!;
        s2 += m[base + j + 2]! * query[j + 2]!;
        s3 += m[base + j + 3]! * query[j + 3]!;
      }
      for (; j < d; j++) s0 += m[base + j]! * query[j]!;
      out[row] = s0 + s1 + s2 + s3;
    }
    return out;
  }
}
