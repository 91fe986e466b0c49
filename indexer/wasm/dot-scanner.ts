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
  private rows: number;

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
        this.memory = memory;
      } catch {
        this.memory = null; // e.g. more than WebAssembly's 4 GiB: plain arrays
      }
    }
    this.matrix = this.memory ? new Float32Array(this.memory.buffer, 0, this.rows * dimensions) : new Float32Array(this.rows * dimensions);
  }

  /** True when scans run in WebAssembly SIMD. */
  get simd(): boolean {
    return this.memory !== null;
  }

  get capacity(): number {
    return this.rows;
  }

  private pagesFor(rows: number): number {
    const bytes = (rows * this.dimensions + this.dimensions + rows) * 4;
    return Math.ceil(bytes / WASM_PAGE);
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
        return;
      } catch {
        // Past WebAssembly's memory limit: continue in a plain array.
        this.memory = null;
        this.scan = null;
      }
    }
    const matrix = new Float32Array(next * this.dimensions);
    matrix.set(this.matrix.subarray(0, this.rows * this.dimensions));
    this.rows = next;
    this.matrix = matrix;
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
