import { openCheckpoint, type Checkpoint } from './checkpoint.js';
import { fromBase64, toBase64 } from '../crypto/encoding.js';
import type { VerificationKey } from '../crypto/jwk.js';
import { receiptLeafHash } from './log.js';
import { verifyConsistency, verifyInclusion } from './merkle.js';
import { verifyReceipt } from './receipt.js';
import './errors.js'; // registers the receipt error codes this file throws

/** One saved file of an audit: its name (for the report) and its text. */
export interface AuditInput {
  name: string;
  text: string;
}

export interface AuditLine {
  ok: boolean;
  topic: 'checkpoint' | 'consistency' | 'receipt' | 'inclusion' | 'input';
  detail: string;
}

export interface AuditReport {
  ok: boolean;
  lines: AuditLine[];
  checkpoints: number;
  receipts: number;
  /** A JWKS found among the inputs (used when the caller pinned none). */
  jwks: unknown;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function hashes(value: unknown): Uint8Array[] | null {
  if (!Array.isArray(value)) return null;
  const out = value.map((h) => (typeof h === 'string' ? fromBase64(h) : null));
  return out.every((h): h is Uint8Array => h !== null && h.length === 32) ? out : null;
}

/** A saved response (with notary_receipt) or a bare receipt, split into the receipt and the body it covers. */
export function splitSavedResponse(document: unknown): { receipt: unknown; body: Record<string, unknown> | undefined } {
  if (isRecord(document) && 'notary_receipt' in document) return { receipt: document['notary_receipt'], body: document };
  return { receipt: document, body: undefined };
}

interface Sorted {
  checkpoints: Array<{ note: string; name: string }>;
  receipts: Array<{ receipt: unknown; body: Record<string, unknown> | undefined; name: string }>;
  inclusions: Array<{ leafIndex: number; treeSize: number; leafHash: Uint8Array; hashes: Uint8Array[]; name: string }>;
  consistencies: Array<{ first: number; second: number; hashes: Uint8Array[]; name: string }>;
  jwks: unknown;
  problems: AuditLine[];
}

/** Recognises each saved file by its content. */
function sortInputs(inputs: AuditInput[]): Sorted {
  const sorted: Sorted = { checkpoints: [], receipts: [], inclusions: [], consistencies: [], jwks: undefined, problems: [] };
  for (const { name, text } of inputs) {
    if (text.includes('\n\n\u2014 ')) {
      sorted.checkpoints.push({ note: text, name });
      continue;
    }
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch {
      sorted.problems.push({ ok: false, topic: 'input', detail: `${name}: neither a checkpoint nor valid JSON` });
      continue;
    }
    if (isRecord(doc) && Array.isArray(doc['keys'])) {
      sorted.jwks ??= doc;
    } else if (isRecord(doc) && typeof doc['leaf_index'] === 'number' && typeof doc['tree_size'] === 'number' && typeof doc['leaf_hash'] === 'string') {
      const leafHash = fromBase64(doc['leaf_hash']);
      const path = hashes(doc['hashes']);
      if (!leafHash || !path) sorted.problems.push({ ok: false, topic: 'input', detail: `${name}: malformed inclusion proof` });
      else sorted.inclusions.push({ leafIndex: doc['leaf_index'], treeSize: doc['tree_size'], leafHash, hashes: path, name });
      if (typeof doc['checkpoint'] === 'string') sorted.checkpoints.push({ note: doc['checkpoint'], name });
    } else if (isRecord(doc) && typeof doc['first'] === 'number' && typeof doc['second'] === 'number') {
      const path = hashes(doc['hashes']);
      if (!path) sorted.problems.push({ ok: false, topic: 'input', detail: `${name}: malformed consistency proof` });
      else sorted.consistencies.push({ first: doc['first'], second: doc['second'], hashes: path, name });
    } else if (isRecord(doc) && ('notary_receipt' in doc || 'signature' in doc)) {
      sorted.receipts.push({ ...splitSavedResponse(doc), name });
    } else {
      sorted.problems.push({ ok: false, topic: 'input', detail: `${name}: not a checkpoint, JWKS, receipt, response or proof` });
    }
  }
  return sorted;
}

/** The JWKS among saved audit files, if any (for callers that pinned no key set). */
export function jwksAmong(inputs: AuditInput[]): unknown {
  return sortInputs(inputs).jwks;
}

/**
 * Offline audit from saved files: every checkpoint's signature, consistency between each pair of consecutive
 * checkpoints (an earlier one must be extended by a later one), and each receipt's signature and inclusion under a
 * checkpoint. Files are recognised by content: checkpoints (signed notes), a JWKS, saved responses or receipts,
 * inclusion and consistency proofs as the /v1/receipts/log endpoints return them.
 */
export function auditSavedFiles(inputs: AuditInput[], keys: VerificationKey[], expectedOrigin?: string): AuditReport {
  const sorted = sortInputs(inputs);
  const lines: AuditLine[] = [...sorted.problems];
  const fail = (topic: AuditLine['topic'], detail: string) => lines.push({ ok: false, topic, detail });
  const pass = (topic: AuditLine['topic'], detail: string) => lines.push({ ok: true, topic, detail });
  if (sorted.checkpoints.length === 0) fail('input', 'no checkpoint among the files: save one from /v1/receipts/log/checkpoint');
  const origin = expectedOrigin ?? sorted.checkpoints[0]?.note.split('\n')[0] ?? '';
  const verifiers = keys.map((k) => ({ name: origin, publicKey: k.publicKey }));
  const checkpoints: Array<Checkpoint & { name: string }> = [];
  for (const { note, name } of sorted.checkpoints) {
    try {
      const cp = openCheckpoint(note, verifiers, origin);
      checkpoints.push({ ...cp, name });
      pass('checkpoint', `${name}: size ${cp.size}, root ${toBase64(cp.rootHash)}, signed by a published key`);
    } catch (err) {
      fail('checkpoint', `${name}: ${(err as Error).message}`);
    }
  }
  checkpoints.sort((a, b) => a.size - b.size);
  for (let i = 1; i < checkpoints.length; i++) {
    const a = checkpoints[i - 1] as Checkpoint & { name: string };
    const b = checkpoints[i] as Checkpoint & { name: string };
    if (a.size === 0) {
      pass('consistency', `checkpoint ${b.size} extends the empty tree`);
    } else if (a.size === b.size) {
      if (toBase64(a.rootHash) !== toBase64(b.rootHash)) fail('consistency', `two checkpoints of size ${a.size} have different roots (${a.name}, ${b.name}): the log forked`);
    } else {
      const proof = sorted.consistencies.find((p) => p.first === a.size && p.second === b.size);
      if (!proof) fail('consistency', `no proof from ${a.size} to ${b.size}: save /v1/receipts/log/consistency?first=${a.size}&second=${b.size}`);
      else if (verifyConsistency(a.size, b.size, a.rootHash, b.rootHash, proof.hashes)) pass('consistency', `checkpoint ${b.size} extends checkpoint ${a.size} (${proof.name})`);
      else fail('consistency', `${proof.name}: the checkpoint of size ${b.size} does not extend the one of size ${a.size}: the log was rewritten`);
    }
  }
  for (const saved of sorted.receipts) {
    const result = verifyReceipt({ receipt: saved.receipt, keys, ...(saved.body ? { responseBody: saved.body } : {}) });
    if (!result.ok || !result.receipt) {
      fail('receipt', `${saved.name}: ${result.checks.filter((c) => c.ok === false).map((c) => `${c.name}: ${c.detail}`).join('; ')}`);
      continue;
    }
    const leaf = receiptLeafHash(result.receipt);
    const leafB64 = toBase64(leaf);
    const matched = sorted.inclusions
      .filter((p) => toBase64(p.leafHash) === leafB64)
      .map((p) => ({ p, cp: checkpoints.find((c) => c.size === p.treeSize) }))
      .find((x) => x.cp);
    if (!matched?.cp) {
      fail(
        'inclusion',
        `${saved.name}: no saved inclusion proof at the size of a checkpoint held ` +
          `(save /v1/receipts/log/inclusion?leaf_hash=${encodeURIComponent(leafB64)}&tree_size=${checkpoints.at(-1)?.size ?? 'N'})`,
      );
    } else if (verifyInclusion(matched.p.leafIndex, matched.p.treeSize, leaf, matched.p.hashes, matched.cp.rootHash)) {
      pass('receipt', `${saved.name}: signature valid, leaf ${matched.p.leafIndex} included under checkpoint ${matched.cp.size}`);
    } else {
      fail('inclusion', `${saved.name}: the proof does not lead to the root of checkpoint ${matched.cp.size}: the receipt is not in the log the checkpoint commits to`);
    }
  }
  return { ok: lines.every((l) => l.ok), lines, checkpoints: checkpoints.length, receipts: sorted.receipts.length, jwks: sorted.jwks };
}
