import { openCheckpoint, parseVerifierKey, type Checkpoint } from './checkpoint.js';
import { fromBase64, toHex } from './encoding.js';
import { leafHash, verifyConsistency, verifyInclusion } from './merkle.js';
import { receiptLeaf, type NotaryReceipt } from './receipts.js';

export interface LogInfo {
  origin: string;
  issuer: string;
  tree_size: number;
  verifier_keys: string[];
}

/** Checks against the receipt log, every answer verified here (nothing the server says is taken on trust). */
export interface LogProofs {
  /** The latest checkpoint, its signature verified with `verifierKeys` (default: the log's published ones). */
  checkpoint(options?: { verifierKeys?: readonly string[] }): Promise<Checkpoint>;
  /** Whether the receipt is in the log under `checkpoint` (default: the latest verified one). */
  verifyInclusion(receipt: NotaryReceipt, checkpoint?: Checkpoint): Promise<{ included: boolean; leafIndex: number; checkpoint: Checkpoint }>;
  /** Whether `newer` extends `older` (the log was only appended to between them). */
  verifyConsistency(older: Checkpoint, newer: Checkpoint): Promise<boolean>;
}

export function checkpointFromLog(get: (path: string) => Promise<string>): LogProofs {
  let keys: string[] | null = null;
  const checkpoint = async (options: { verifierKeys?: readonly string[] } = {}): Promise<Checkpoint> => {
    const info = JSON.parse(await get('/v1/receipts/log')) as LogInfo;
    const vkeys = options.verifierKeys ?? keys ?? info.verifier_keys;
    keys = [...vkeys];
    const verifiers = await Promise.all(vkeys.map(parseVerifierKey));
    return openCheckpoint(await get('/v1/receipts/log/checkpoint'), verifiers, info.origin);
  };
  return {
    checkpoint,
    async verifyInclusion(receipt, at) {
      const cp = at ?? (await checkpoint());
      const leaf = await leafHash(receiptLeaf(receipt));
      const proof = JSON.parse(await get(`/v1/receipts/log/inclusion?leaf_hash=${toHex(leaf)}&tree_size=${cp.size}`)) as { leaf_index: number; hashes: string[] };
      const included = await verifyInclusion(proof.leaf_index, cp.size, leaf, proof.hashes.map(fromBase64), cp.rootHash);
      return { included, leafIndex: proof.leaf_index, checkpoint: cp };
    },
    async verifyConsistency(older, newer) {
      if (older.size === newer.size) return verifyConsistency(older.size, newer.size, older.rootHash, newer.rootHash, []);
      if (older.size === 0) return true;
      const proof = JSON.parse(await get(`/v1/receipts/log/consistency?first=${older.size}&second=${newer.size}`)) as { hashes: string[] };
      return verifyConsistency(older.size, newer.size, older.rootHash, newer.rootHash, proof.hashes.map(fromBase64));
    },
  };
}
