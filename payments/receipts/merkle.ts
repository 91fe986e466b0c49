import { createHash } from 'node:crypto';
import { bytesEqual } from '../crypto/encoding.js';

/**
 * RFC 6962 / RFC 9162 §2.1 Merkle tree hashing, proofs and their verification. The log stores every complete
 * (perfect, aligned) subtree hash as node (level, index): level 0 holds the leaf hashes, and node (l, i) covers
 * leaves [i·2^l, (i+1)·2^l). Every hash a proof needs is a fold of such nodes, so proofs for any past tree size
 * come from stored hashes without rebuilding the tree.
 */

export const HASH_LENGTH = 32;

export function leafHash(leaf: Uint8Array): Uint8Array {
  return new Uint8Array(createHash('sha256').update(Uint8Array.of(0)).update(leaf).digest());
}

export function nodeHash(left: Uint8Array, right: Uint8Array): Uint8Array {
  return new Uint8Array(createHash('sha256').update(Uint8Array.of(1)).update(left).update(right).digest());
}

/** MTH({}): the hash of an empty tree. */
export function emptyRootHash(): Uint8Array {
  return new Uint8Array(createHash('sha256').digest());
}

export interface NodeId {
  level: number;
  index: number;
}

/** A range of leaves [start, end) whose RFC 6962 subtree hash a proof carries. */
export type LeafRange = readonly [start: number, end: number];

function checkSize(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name} must be a non-negative integer, got ${value}`);
}

/** The largest power of two strictly below n (n ≥ 2). */
export function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function isPowerOfTwo(n: number): boolean {
  return n > 0 && 2 ** Math.round(Math.log2(n)) === n;
}

/** PATH(m, D[n]) of RFC 6962 §2.1.1 as leaf ranges, ordered from the leaf upward. */
export function inclusionProofRanges(index: number, size: number): LeafRange[] {
  checkSize('index', index);
  checkSize('size', size);
  if (index >= size) throw new RangeError(`leaf ${index} is not in a tree of size ${size}`);
  const out: LeafRange[] = [];
  const walk = (m: number, start: number, end: number): void => {
    const n = end - start;
    if (n <= 1) return;
    const k = splitPoint(n);
    if (m < k) {
      walk(m, start, start + k);
      out.push([start + k, end]);
    } else {
      walk(m - k, start + k, end);
      out.push([start, start + k]);
    }
  };
  walk(index, 0, size);
  return out;
}

/** PROOF(m, D[n]) of RFC 6962 §2.1.2 as leaf ranges, for 0 < m ≤ n; empty when m = n. */
export function consistencyProofRanges(first: number, second: number): LeafRange[] {
  checkSize('first', first);
  checkSize('second', second);
  if (first < 1 || first > second) throw new RangeError(`no consistency proof from size ${first} to ${second}`);
  const out: LeafRange[] = [];
  const sub = (m: number, start: number, end: number, whole: boolean): void => {
    const n = end - start;
    if (m === n) {
      if (!whole) out.push([start, end]);
      return;
    }
    const k = splitPoint(n);
    if (m <= k) {
      sub(m, start, start + k, whole);
      out.push([start + k, end]);
    } else {
      sub(m - k, start + k, end, false);
      out.push([start, start + k]);
    }
  };
  sub(first, 0, second, true);
  return out;
}

/** The stored complete subtrees whose fold is the hash of a proof range (or of a whole tree: [0, size)). */
export function rangeNodes(start: number, end: number): NodeId[] {
  const out: NodeId[] = [];
  let s = start;
  while (s < end) {
    const n = end - s;
    if (isPowerOfTwo(n) && s % n === 0) {
      out.push({ level: Math.log2(n), index: s / n });
      break;
    }
    const k = splitPoint(n);
    out.push({ level: Math.log2(k), index: s / k });
    s += k;
  }
  return out;
}

/** Folds the hashes of {@link rangeNodes} (left to right) into the range's subtree hash. */
export function foldRange(hashes: Uint8Array[]): Uint8Array {
  const last = hashes[hashes.length - 1];
  if (!last) throw new RangeError('an empty range has no subtree hash');
  let acc = last;
  for (let i = hashes.length - 2; i >= 0; i--) acc = nodeHash(hashes[i] as Uint8Array, acc);
  return acc;
}

export type NodeLookup = (node: NodeId) => Uint8Array;

export function nodeKey(node: NodeId): string {
  return `${node.level}:${node.index}`;
}

/** Hash of the tree of the first `size` leaves from stored nodes. */
export function rootHash(size: number, lookup: NodeLookup): Uint8Array {
  checkSize('size', size);
  if (size === 0) return emptyRootHash();
  return foldRange(rangeNodes(0, size).map(lookup));
}

export function proofHashes(ranges: LeafRange[], lookup: NodeLookup): Uint8Array[] {
  return ranges.map(([start, end]) => foldRange(rangeNodes(start, end).map(lookup)));
}

/** Every stored node the given ranges need, without duplicates (to fetch them in one query). */
export function nodesFor(ranges: LeafRange[]): NodeId[] {
  const seen = new Map<string, NodeId>();
  for (const [start, end] of ranges) for (const node of rangeNodes(start, end)) seen.set(nodeKey(node), node);
  return [...seen.values()];
}

/**
 * The right edge of a tree: for each set bit l of the size, the hash of the complete subtree at level l that the
 * size's binary decomposition ends with. Appending a leaf touches only this edge, so it costs O(log n) hashes and
 * writes no more than 1 + (trailing ones of the size) nodes.
 */
export class Frontier {
  private constructor(
    private treeSize: number,
    /** frontier[l]: node (l, (size >> l) - 1) when bit l of the size is set. */
    private readonly edge: (Uint8Array | undefined)[],
  ) {}

  static empty(): Frontier {
    return new Frontier(0, []);
  }

  /** The nodes to load for a tree of `size` leaves, see {@link Frontier.fromNodes}. */
  static nodesFor(size: number): NodeId[] {
    checkSize('size', size);
    const out: NodeId[] = [];
    for (let level = 0; 2 ** level <= size; level++) {
      if (Math.floor(size / 2 ** level) % 2 === 1) out.push({ level, index: Math.floor(size / 2 ** level) - 1 });
    }
    return out;
  }

  static fromNodes(size: number, lookup: NodeLookup): Frontier {
    const edge: (Uint8Array | undefined)[] = [];
    for (const node of Frontier.nodesFor(size)) edge[node.level] = lookup(node);
    return new Frontier(size, edge);
  }

  get size(): number {
    return this.treeSize;
  }

  root(): Uint8Array {
    let acc: Uint8Array | undefined;
    for (const hash of this.edge) {
      if (!hash) continue;
      acc = acc ? nodeHash(hash, acc) : hash;
    }
    return acc ?? emptyRootHash();
  }

  /** The nodes appending `leaf` (a leaf hash) creates, without changing this frontier. */
  planAppend(leaf: Uint8Array): { nodes: Array<NodeId & { hash: Uint8Array }>; next: Frontier } {
    const index = this.treeSize;
    const edge = [...this.edge];
    const nodes: Array<NodeId & { hash: Uint8Array }> = [{ level: 0, index, hash: leaf }];
    let carry = leaf;
    let level = 0;
    while (edge[level]) {
      carry = nodeHash(edge[level] as Uint8Array, carry);
      edge[level] = undefined;
      level++;
      nodes.push({ level, index: Math.floor(index / 2 ** level), hash: carry });
    }
    edge[level] = carry;
    return { nodes, next: new Frontier(index + 1, edge) };
  }
}

/** RFC 9162 §2.1.3.2: does `proof` show leaf `hash` at `index` under `root` of a tree of `size` leaves? */
export function verifyInclusion(index: number, size: number, hash: Uint8Array, proof: Uint8Array[], root: Uint8Array): boolean {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) return false;
  if (![hash, root, ...proof].every((h) => h.length === HASH_LENGTH)) return false;
  let fn = index;
  let sn = size - 1;
  let r = hash;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && bytesEqual(r, root);
}

/** RFC 9162 §2.1.4.2: does `proof` show the tree of `second` leaves (secondRoot) extends the one of `first`? */
export function verifyConsistency(first: number, second: number, firstRoot: Uint8Array, secondRoot: Uint8Array, proof: Uint8Array[]): boolean {
  // A proof from the empty tree proves nothing, so it is refused like any malformed input (as transparency-dev does).
  if (!Number.isSafeInteger(first) || !Number.isSafeInteger(second) || first < 1 || first > second) return false;
  if (![firstRoot, secondRoot, ...proof].every((h) => h.length === HASH_LENGTH)) return false;
  if (first === second) return proof.length === 0 && bytesEqual(firstRoot, secondRoot);
  if (proof.length === 0) return false;
  const path = isPowerOfTwo(first) ? [firstRoot, ...proof] : [...proof];
  let fn = first - 1;
  let sn = second - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = path[0] as Uint8Array;
  let sr = fr;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return bytesEqual(fr, firstRoot) && bytesEqual(sr, secondRoot) && sn === 0;
}
