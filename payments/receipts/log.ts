import { NotaryError } from '../../core/index.js';
import type { ReceiptLogStore } from './log-store.js';
import { formatCheckpointText, parseCheckpointText, signNote } from './checkpoint.js';
import { bytesEqual, toBase64 } from '../crypto/encoding.js';
import { canonicalJson } from '../crypto/jcs.js';
import type { ReceiptKeyring } from './keyring.js';
import {
  consistencyProofRanges,
  Frontier,
  inclusionProofRanges,
  leafHash,
  nodeKey,
  nodesFor,
  proofHashes,
  rangeNodes,
  rootHash,
  type NodeId,
  type NodeLookup,
} from './merkle.js';
import type { NotaryReceipt } from './receipt.js';
import './errors.js'; // registers the receipt error codes this file throws

/** The leaf of a receipt in the log: the UTF-8 JCS of the signed receipt. */
export function receiptLeaf(receipt: NotaryReceipt): Uint8Array {
  return new TextEncoder().encode(canonicalJson(receipt));
}

export function receiptLeafHash(receipt: NotaryReceipt): Uint8Array {
  return leafHash(receiptLeaf(receipt));
}

export interface LogCheckpoint {
  origin: string;
  size: number;
  rootHash: Uint8Array;
  /** The signed note, exactly as published. */
  note: string;
  createdAt: string;
}

export interface InclusionProof {
  leafIndex: number;
  treeSize: number;
  leafHash: Uint8Array;
  hashes: Uint8Array[];
}

export interface ConsistencyProof {
  first: number;
  second: number;
  hashes: Uint8Array[];
}

export interface ReceiptLogOptions {
  store: ReceiptLogStore;
  /** Checkpoint origin line and note key name, e.g. `search.example.org/receipt-log`. */
  origin: string;
  keyring: ReceiptKeyring;
  /** A new checkpoint is signed at most this often while the log grows (0: whenever it has grown). */
  checkpointIntervalMs?: number;
  now?: () => Date;
}

function lookupFrom(map: Map<string, Uint8Array>, what: string): NodeLookup {
  return (node: NodeId) => {
    const hash = map.get(nodeKey(node));
    if (!hash) throw new NotaryError('receipt_log_corrupt', `receipt log node ${nodeKey(node)} is missing (${what})`);
    return hash;
  };
}

/**
 * The append-only receipt log: an RFC 6962 Merkle tree in storage with C2SP checkpoints. Appends are serialised in
 * this process and locked across processes by the store; each one writes the leaf and the complete subtrees it
 * closes, computed from the cached right edge of the tree (reloaded only when another process appended).
 */
export class ReceiptLog {
  private frontier: Frontier | null = null;
  private tail: Promise<unknown> = Promise.resolve();
  private readonly store: ReceiptLogStore;
  private readonly keyring: ReceiptKeyring;
  private readonly intervalMs: number;
  private readonly now: () => Date;
  readonly origin: string;

  constructor(options: ReceiptLogOptions) {
    if (options.origin.length === 0 || /[\s+]/u.test(options.origin)) throw new RangeError('the receipt log origin must be non-empty without spaces or "+"');
    this.store = options.store;
    this.origin = options.origin;
    this.keyring = options.keyring;
    this.intervalMs = options.checkpointIntervalMs ?? 0;
    this.now = options.now ?? (() => new Date());
  }

  /** Appends a signed receipt; resolves once it is committed. */
  append(receipt: NotaryReceipt): Promise<{ leafIndex: number; leafHash: Uint8Array }> {
    const run = this.tail.then(() => this.appendNow(receipt));
    this.tail = run.catch(() => undefined);
    return run;
  }

  private async appendNow(receipt: NotaryReceipt): Promise<{ leafIndex: number; leafHash: Uint8Array }> {
    const leaf = receiptLeaf(receipt);
    const hash = leafHash(leaf);
    const entry = (index: number) => ({
      leafIndex: index,
      leafHash: hash,
      requestId: receipt.request_id,
      kid: receipt.kid,
      issuedAt: receipt.issued_at,
      receipt: new TextDecoder().decode(leaf),
    });
    const cached = this.frontier;
    if (cached && this.store.singleStatementAppend) {
      // Optimistic: one statement that only applies while the cached edge is current.
      const plan = cached.planAppend(hash);
      if (await this.store.appendAt(cached.size, entry(cached.size), plan.nodes)) {
        this.frontier = plan.next;
        return { leafIndex: cached.size, leafHash: hash };
      }
    }
    const { index, next } = await this.store.append(async (tx) => {
      const index = await tx.claimNextIndex();
      let frontier = this.frontier;
      if (!frontier || frontier.size !== index) {
        const refs = Frontier.nodesFor(index);
        frontier = Frontier.fromNodes(index, lookupFrom(await tx.nodes(refs), `right edge of size ${index}`));
      }
      const plan = frontier.planAppend(hash);
      await tx.insert(entry(index), plan.nodes);
      return { index, next: plan.next };
    });
    this.frontier = next;
    return { leafIndex: index, leafHash: hash };
  }

  async treeSize(): Promise<number> {
    return this.store.treeSize();
  }

  async rootHash(size: number): Promise<Uint8Array> {
    const refs = size === 0 ? [] : rangeNodes(0, size);
    return rootHash(size, lookupFrom(await this.store.nodes(refs), `root of size ${size}`));
  }

  /**
   * The latest signed checkpoint. When the log has grown since the last one (and the interval allows) a new one is
   * signed with the current key and stored; two processes racing to store the same size keep the first.
   */
  async checkpoint(): Promise<LogCheckpoint> {
    const [size, latest] = await Promise.all([this.store.treeSize(), this.store.latestCheckpoint()]);
    const now = this.now();
    if (latest && (latest.treeSize === size || now.getTime() - Date.parse(latest.createdAt) < this.intervalMs)) return this.describe(latest);
    const root = await this.rootHash(size);
    const key = this.keyring.current();
    const note = signNote(formatCheckpointText({ origin: this.origin, size, rootHash: root }), this.origin, key.seedForSigning(), key.publicKey);
    return this.describe(await this.store.saveCheckpoint({ treeSize: size, rootHash: root, note, createdAt: now.toISOString() }));
  }

  private describe(row: { treeSize: number; rootHash: Uint8Array; note: string; createdAt: string }): LogCheckpoint {
    return { origin: this.origin, size: row.treeSize, rootHash: row.rootHash, note: row.note, createdAt: row.createdAt };
  }

  private async checkTreeSize(treeSize: number): Promise<void> {
    const size = await this.store.treeSize();
    if (!Number.isSafeInteger(treeSize) || treeSize < 1 || treeSize > size) {
      throw new NotaryError('tree_size_out_of_range', `tree size must be from 1 to the log's size, ${size}; got ${treeSize}`, { log_size: size });
    }
  }

  /** Inclusion proof of the receipt with this leaf hash in the tree of `treeSize` leaves. */
  async inclusionProof(hash: Uint8Array, treeSize: number): Promise<InclusionProof> {
    const entry = await this.store.entryByLeafHash(hash);
    if (!entry) throw new NotaryError('receipt_not_found', 'No receipt with this leaf hash is in the log');
    return this.inclusionProofAt(entry.leafIndex, treeSize);
  }

  async inclusionProofAt(leafIndex: number, treeSize: number): Promise<InclusionProof> {
    await this.checkTreeSize(treeSize);
    if (!Number.isSafeInteger(leafIndex) || leafIndex < 0 || leafIndex >= treeSize) {
      throw new NotaryError('receipt_not_found', `Leaf ${leafIndex} is not in the tree of size ${treeSize} (it was appended later)`, { leaf_index: leafIndex });
    }
    const ranges = inclusionProofRanges(leafIndex, treeSize);
    const nodes = await this.store.nodes([...nodesFor(ranges), { level: 0, index: leafIndex }]);
    const lookup = lookupFrom(nodes, `inclusion proof of ${leafIndex} at ${treeSize}`);
    return { leafIndex, treeSize, leafHash: lookup({ level: 0, index: leafIndex }), hashes: proofHashes(ranges, lookup) };
  }

  async consistencyProof(first: number, second: number): Promise<ConsistencyProof> {
    await this.checkTreeSize(second);
    if (!Number.isSafeInteger(first) || first < 1 || first > second) {
      throw new NotaryError('tree_size_out_of_range', `first must be from 1 to second (${second}); got ${first}`);
    }
    const ranges = consistencyProofRanges(first, second);
    const lookup = lookupFrom(await this.store.nodes(nodesFor(ranges)), `consistency proof ${first} -> ${second}`);
    return { first, second, hashes: proofHashes(ranges, lookup) };
  }

  async entriesByRequestId(requestId: string): Promise<Array<{ leafIndex: number }>> {
    return (await this.store.entriesByRequestId(requestId)).map((e) => ({ leafIndex: e.leafIndex }));
  }

  /** Receipts with start ≤ index < end (for monitors that mirror the whole log). */
  async entries(start: number, end: number): Promise<Array<{ leafIndex: number; receipt: NotaryReceipt }>> {
    const rows = await this.store.entries(start, end);
    return rows.map((r) => ({ leafIndex: r.leafIndex, receipt: JSON.parse(r.receipt) as NotaryReceipt }));
  }

  /**
   * Recomputes the whole tree from the stored receipts: every leaf hash, every stored node and the root of every
   * stored checkpoint must match. O(n); for `notary receipts audit --local` and tests, not for start-up.
   */
  async verifyAll(options: { batch?: number; onProgress?: (done: number, total: number) => void } = {}): Promise<{ size: number; checkpoints: number }> {
    const batch = options.batch ?? 4096;
    const size = await this.store.treeSize();
    const checkpoints = new Map((await this.store.allCheckpoints()).map((c) => [c.treeSize, c]));
    const fail = (why: string) => new NotaryError('receipt_log_corrupt', `the stored receipt log is inconsistent: ${why}`);
    let frontier = Frontier.empty();
    const checkRoot = () => {
      const cp = checkpoints.get(frontier.size);
      if (cp && !bytesEqual(cp.rootHash, frontier.root())) throw fail(`checkpoint of size ${cp.treeSize} does not match the stored receipts`);
    };
    checkRoot();
    for (let start = 0; start < size; start += batch) {
      const end = Math.min(size, start + batch);
      const entries = await this.store.entries(start, end);
      const stored = new Map<string, Uint8Array>();
      for (let level = 0; 2 ** level <= end; level++) {
        const first = Math.floor(start / 2 ** level);
        for (const [index, hash] of await this.store.nodesAtLevel(level, first, Math.floor(end / 2 ** level) + 1)) stored.set(nodeKey({ level, index }), hash);
      }
      for (let i = start; i < end; i++) {
        const entry = entries[i - start];
        if (!entry || entry.leafIndex !== i) throw fail(`receipt ${i} is missing`);
        const hash = leafHash(new TextEncoder().encode(entry.receipt));
        if (!bytesEqual(hash, entry.leafHash)) throw fail(`receipt ${i} does not hash to its stored leaf hash`);
        const plan = frontier.planAppend(hash);
        for (const node of plan.nodes) {
          const have = stored.get(nodeKey(node));
          if (!have || !bytesEqual(have, node.hash)) throw fail(`node ${nodeKey(node)} does not match the receipts below it`);
        }
        frontier = plan.next;
        checkRoot();
      }
      options.onProgress?.(end, size);
    }
    return { size, checkpoints: checkpoints.size };
  }

  /**
   * Start-up check that the stored tree still produces the root of the last published checkpoint. A mismatch means
   * the log was rewritten or damaged underneath us: the service must not sign new checkpoints on top of it.
   */
  async selfCheck(): Promise<{ size: number; checkpointSize: number | null }> {
    const [size, latest] = await Promise.all([this.store.treeSize(), this.store.latestCheckpoint()]);
    if (latest) {
      const parsed = parseCheckpointText(latest.note.slice(0, latest.note.lastIndexOf('\n\n') + 1));
      const root = await this.rootHash(latest.treeSize);
      if (latest.treeSize > size || !bytesEqual(root, latest.rootHash) || !bytesEqual(root, parsed.rootHash)) {
        throw new NotaryError(
          'receipt_log_corrupt',
          `the receipt log no longer matches its checkpoint of size ${latest.treeSize} (stored root ${toBase64(latest.rootHash)}, recomputed ${toBase64(root)}); refusing to extend it`,
        );
      }
    }
    if (size > 0) {
      const refs = Frontier.nodesFor(size);
      this.frontier = Frontier.fromNodes(size, lookupFrom(await this.store.nodes(refs), `right edge of size ${size}`));
    }
    return { size, checkpointSize: latest?.treeSize ?? null };
  }
}
