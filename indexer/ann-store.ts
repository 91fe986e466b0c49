import { createHash, randomBytes } from 'node:crypto';
import { readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { endianness } from 'node:os';
import path from 'node:path';
import type { AnnGraphFile, AnnGraphWear } from './ann-graph.js';

/** What a saved graph must have been built with to stand in for a build now. */
export interface AnnGraphIdentity {
  model: string;
  dimensions: number;
  metric: 'cos';
  quantization: 'i8';
  connectivity: number;
  expansionAdd: number;
}

/** Passage ids with the write seq of the vector the graph holds for each (row i: ids[i], seqs[i]). */
export interface VersionedIds {
  readonly size: number;
  readonly ids: Float64Array;
  readonly seqs: Float64Array;
}

/** A few rows' exact vectors: a graph saved from another database with the same (id, seq) pairs differs in them. */
export interface VectorSample extends VersionedIds {
  readonly vectors: Float32Array;
}

export interface SavedAnnGraph {
  graph: AnnGraphFile;
  wear: AnnGraphWear;
  vectors: VersionedIds;
  sample: VectorSample;
}

export type SavedAnnGraphRead = { saved: SavedAnnGraph } | { ignored: string };

const FORMAT = 1;
const MAGIC = 'notary-hnsw';
/** Graph files and temporary files no manifest names are removed once this old (a save in another process is done by then). */
const ORPHAN_AGE_MS = 10 * 60_000;

interface ManifestHeader {
  magic: string;
  format: number;
  endianness: string;
  identity: AnnGraphIdentity;
  graph: Omit<AnnGraphFile, 'file'> & { name: string };
  wear: AnnGraphWear;
  count: number;
  sampleCount: number;
  arraysSha256: string;
}

function sameIdentity(a: AnnGraphIdentity, b: AnnGraphIdentity): string | null {
  for (const key of ['model', 'dimensions', 'metric', 'quantization', 'connectivity', 'expansionAdd'] as const) {
    if (a[key] !== b[key]) return `${key} ${JSON.stringify(a[key])}, expected ${JSON.stringify(b[key])}`;
  }
  return null;
}

function bytesOf(array: Float64Array | Float32Array): Uint8Array {
  return new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
}

/** Copies `count` elements from `bytes` at `offset` into a new, aligned array. */
function float64At(bytes: Uint8Array, offset: number, count: number): Float64Array {
  const out = new Float64Array(count);
  bytesOf(out).set(bytes.subarray(offset, offset + count * 8));
  return out;
}

function float32At(bytes: Uint8Array, offset: number, count: number): Float32Array {
  const out = new Float32Array(count);
  bytesOf(out).set(bytes.subarray(offset, offset + count * 4));
  return out;
}

/**
 * A saved HNSW graph of one model's vectors in a directory: `vectors-<hash of model and dimensions>.manifest` names
 * the graph file (`vectors-<hash>-<random>.usearch`, written by the graph's worker) and records what the graph
 * mirrors — the model, dimensions and graph options it was built with, the (passage id, write seq) pairs it holds
 * and a few rows' exact vectors. Every file is written under a temporary name and renamed into place, so a crash
 * mid-save leaves the previous manifest and the graph file it names.
 */
export class AnnGraphStore {
  readonly manifestFile: string;
  private readonly stem: string;

  constructor(
    readonly directory: string,
    readonly identity: AnnGraphIdentity,
  ) {
    const key = createHash('sha256').update(`${identity.model}\n${identity.dimensions}`).digest('hex').slice(0, 16);
    this.stem = `vectors-${key}`;
    this.manifestFile = path.join(directory, `${this.stem}.manifest`);
  }

  /** A fresh name for the next graph file (the current one stays valid until the manifest names the new one). */
  nextGraphFile(): string {
    return path.join(this.directory, `${this.stem}-${randomBytes(6).toString('hex')}.usearch`);
  }

  /** Removes a graph file whose save failed. */
  async discard(file: string): Promise<void> {
    await rm(file, { force: true }).catch(() => undefined);
  }

  /** The saved graph, or why there is none to trust. */
  async read(): Promise<SavedAnnGraphRead> {
    let bytes: Buffer;
    try {
      bytes = await readFile(this.manifestFile);
    } catch (error) {
      return { ignored: (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no saved graph' : `unreadable manifest: ${String(error)}` };
    }
    if (bytes.length < 4) return { ignored: 'truncated manifest' };
    const headerLength = bytes.readUInt32LE(0);
    let header: ManifestHeader;
    try {
      header = JSON.parse(bytes.subarray(4, 4 + headerLength).toString('utf8')) as ManifestHeader;
    } catch {
      return { ignored: 'unreadable manifest header' };
    }
    if (header.magic !== MAGIC || header.format !== FORMAT) return { ignored: `manifest format ${String(header.format)}, expected ${FORMAT}` };
    if (header.endianness !== endianness()) return { ignored: `manifest written on a ${header.endianness} machine` };
    const mismatch = sameIdentity(header.identity, this.identity);
    if (mismatch) return { ignored: `saved graph built with ${mismatch}` };
    const d = this.identity.dimensions;
    const start = Math.ceil((4 + headerLength) / 8) * 8;
    const expected = start + (header.count * 2 + header.sampleCount * 2) * 8 + header.sampleCount * d * 4;
    if (bytes.length !== expected) return { ignored: `manifest has ${bytes.length} bytes, expected ${expected}` };
    const arrays = bytes.subarray(start);
    if (createHash('sha256').update(arrays).digest('hex') !== header.arraysSha256) return { ignored: 'manifest checksum differs' };
    let at = start;
    const take = (count: number): Float64Array => {
      const out = float64At(bytes, at, count);
      at += count * 8;
      return out;
    };
    const ids = take(header.count);
    const seqs = take(header.count);
    const sampleIds = take(header.sampleCount);
    const sampleSeqs = take(header.sampleCount);
    const sampleVectors = float32At(bytes, at, header.sampleCount * d);
    const { name, ...graph } = header.graph;
    return {
      saved: {
        graph: { file: path.join(this.directory, path.basename(name)), ...graph },
        wear: header.wear,
        vectors: { size: header.count, ids, seqs },
        sample: { size: header.sampleCount, ids: sampleIds, seqs: sampleSeqs, vectors: sampleVectors },
      },
    };
  }

  /**
   * Makes the manifest name `saved.graph.file` (atomically), then removes `superseded` (this process's previous
   * graph file) and leftovers no manifest can name any more.
   */
  async write(saved: SavedAnnGraph, superseded: string | null): Promise<void> {
    const arrays = [saved.vectors.ids.subarray(0, saved.vectors.size), saved.vectors.seqs.subarray(0, saved.vectors.size), saved.sample.ids, saved.sample.seqs, saved.sample.vectors].map(bytesOf);
    const hash = createHash('sha256');
    for (const part of arrays) hash.update(part);
    const { file, ...graph } = saved.graph;
    const header: ManifestHeader = {
      magic: MAGIC,
      format: FORMAT,
      endianness: endianness(),
      identity: this.identity,
      graph: { name: path.basename(file), ...graph },
      wear: saved.wear,
      count: saved.vectors.size,
      sampleCount: saved.sample.size,
      arraysSha256: hash.digest('hex'),
    };
    const json = Buffer.from(JSON.stringify(header), 'utf8');
    const prefix = Buffer.alloc(Math.ceil((4 + json.length) / 8) * 8);
    prefix.writeUInt32LE(json.length, 0);
    json.copy(prefix, 4);
    const temporary = `${this.manifestFile}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
    try {
      await writeFile(temporary, Buffer.concat([prefix, ...arrays]), { flush: true });
      await rename(temporary, this.manifestFile);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
    if (superseded && superseded !== file) await rm(superseded, { force: true });
    await this.removeOrphans(path.basename(file));
  }

  private async removeOrphans(current: string): Promise<void> {
    const now = Date.now();
    for (const name of await readdir(this.directory)) {
      if (!name.startsWith(this.stem) || name === current || name === path.basename(this.manifestFile)) continue;
      const file = path.join(this.directory, name);
      const info = await stat(file).catch(() => null);
      if (info && now - info.mtimeMs > ORPHAN_AGE_MS) await rm(file, { force: true });
    }
  }

  /** Removes the manifest, then every graph file of this model. */
  async remove(): Promise<void> {
    await rm(this.manifestFile, { force: true });
    const names = await readdir(this.directory).catch(() => []);
    for (const name of names) if (name.startsWith(`${this.stem}-`)) await rm(path.join(this.directory, name), { force: true });
  }
}
