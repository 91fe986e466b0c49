import { createHash } from 'node:crypto';

/**
 * A deliberately naive RFC 6962 §2.1 Merkle tree over a list of leaves, written straight from the RFC's recursive
 * definitions (MTH, PATH, PROOF/SUBPROOF) and nothing else. Tests compare the stored-node implementation in
 * payments/receipts/merkle.ts against it; the vector generator uses it.
 */
const sha = (...parts: Uint8Array[]) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
};

function k(n: number): number {
  let p = 1;
  while (p * 2 < n) p *= 2;
  return p;
}

export function referenceMth(leaves: Uint8Array[]): Uint8Array {
  if (leaves.length === 0) return sha();
  if (leaves.length === 1) return sha(Uint8Array.of(0), leaves[0] as Uint8Array);
  const split = k(leaves.length);
  return sha(Uint8Array.of(1), referenceMth(leaves.slice(0, split)), referenceMth(leaves.slice(split)));
}

export function referencePath(m: number, leaves: Uint8Array[]): Uint8Array[] {
  if (leaves.length <= 1) return [];
  const split = k(leaves.length);
  if (m < split) return [...referencePath(m, leaves.slice(0, split)), referenceMth(leaves.slice(split))];
  return [...referencePath(m - split, leaves.slice(split)), referenceMth(leaves.slice(0, split))];
}

function subproof(m: number, leaves: Uint8Array[], whole: boolean): Uint8Array[] {
  const n = leaves.length;
  if (m === n) return whole ? [] : [referenceMth(leaves)];
  const split = k(n);
  if (m <= split) return [...subproof(m, leaves.slice(0, split), whole), referenceMth(leaves.slice(split))];
  return [...subproof(m - split, leaves.slice(split), false), referenceMth(leaves.slice(0, split))];
}

export function referenceConsistency(m: number, leaves: Uint8Array[]): Uint8Array[] {
  return subproof(m, leaves, true);
}
