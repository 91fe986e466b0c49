import { readFileSync } from 'node:fs';
import type { NotaryConfig } from '../core/config.js';
import { NotaryError } from '../core/errors.js';
import {
  fromBase64,
  openCheckpoint,
  openReceipts,
  parseJwks,
  receiptLeafHash,
  receiptSettings,
  ReceiptKeyring,
  toBase64,
  verifyConsistency,
  verifyInclusion,
  verifyReceipt,
  type Checkpoint,
  type ReceiptCheck,
  type VerificationKey,
} from '../payments/receipts/index.js';
import { openStorage } from '../storage/db.js';

type Print = (line: string) => void;
const stdout: Print = (line) => process.stdout.write(`${line}\n`);

function isoOf(seconds: number): string {
  return `${new Date(seconds * 1000).toISOString().slice(0, 19)}Z`;
}

export async function rotateKeyCommand(cfg: NotaryConfig, print: Print = stdout): Promise<void> {
  const settings = receiptSettings(cfg);
  const { current, retired } = ReceiptKeyring.rotate(settings.keyFile);
  if (retired) print(`retired ${retired.kid} (signs no more; receipts it signed keep verifying: valid ${isoOf(retired.notBefore)} .. ${isoOf(retired.notAfter ?? 0)})`);
  print(`current ${current.kid} (valid from ${isoOf(current.notBefore)}) in ${settings.keyFile}`);
  print('a running `notary serve` signs with the new key from its next receipt; the JWKS lists both');
}

/** Reads a JWKS from a file or an http(s) URL. */
async function loadJwks(source: string): Promise<VerificationKey[]> {
  let document: unknown;
  if (/^https?:\/\//i.test(source)) {
    let res: Response;
    try {
      res = await fetch(source, { signal: AbortSignal.timeout(10_000), headers: { accept: 'application/jwk-set+json, application/json' } });
    } catch (err) {
      throw new NotaryError('receipt_verification_failed', `cannot fetch the JWKS from ${source}: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (!res.ok) throw new NotaryError('receipt_verification_failed', `the JWKS at ${source} answered HTTP ${res.status}`);
    document = await res.json().catch(() => null);
  } else {
    try {
      document = JSON.parse(readFileSync(source, 'utf8'));
    } catch (err) {
      throw new NotaryError('receipt_verification_failed', `cannot read the JWKS file ${source}: ${(err as Error).message}`);
    }
  }
  try {
    return parseJwks(document);
  } catch (err) {
    throw new NotaryError('receipt_verification_failed', `the JWKS from ${source} is not usable: ${(err as Error).message}`);
  }
}

function readJson(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new NotaryError('invalid_request', `cannot read ${file}: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new NotaryError('receipt_verification_failed', `${file} is not valid JSON`);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function printChecks(checks: ReceiptCheck[], print: Print): void {
  for (const c of checks) print(`${c.ok === true ? 'ok  ' : c.ok === false ? 'FAIL' : '--  '}  ${c.name.padEnd(15)} ${c.detail}`);
}

/** A saved response (with notary_receipt) or a bare receipt, split into the receipt and the body it covers. */
function splitSaved(document: unknown): { receipt: unknown; body: Record<string, unknown> | undefined } {
  if (isRecord(document) && 'notary_receipt' in document) return { receipt: document['notary_receipt'], body: document };
  return { receipt: document, body: undefined };
}

export async function verifyCommand(
  cfg: NotaryConfig,
  file: string,
  opts: { jwks?: string; request?: string },
  print: Print = stdout,
): Promise<void> {
  const { receipt, body } = splitSaved(readJson(file));
  let source = opts.jwks;
  if (!source) {
    const issuer = isRecord(receipt) && typeof receipt['issuer'] === 'string' ? receipt['issuer'] : '';
    if (!/^https?:\/\//i.test(issuer)) {
      throw new NotaryError('receipt_verification_failed', 'the receipt names no http(s) issuer to fetch keys from: pass --jwks FILE|URL');
    }
    source = `${issuer.replace(/\/+$/, '')}/.well-known/jwks.json`;
    print(`keys: ${source} (from the receipt's issuer; pass --jwks to pin the keys you trust)`);
  } else {
    print(`keys: ${source}`);
  }
  const keys = await loadJwks(source);
  let requestBody: Uint8Array | undefined;
  if (opts.request) {
    try {
      requestBody = new Uint8Array(readFileSync(opts.request));
    } catch (err) {
      throw new NotaryError('invalid_request', `cannot read ${opts.request}: ${(err as Error).message}`);
    }
  }
  const result = verifyReceipt({ receipt, keys, ...(body ? { responseBody: body } : {}), ...(requestBody ? { requestBody } : {}) });
  printChecks(result.checks, print);
  if (!result.ok) {
    const failed = result.checks.filter((c) => c.ok === false);
    throw new NotaryError('receipt_verification_failed', `receipt does not verify: ${failed.map((c) => `${c.name}: ${c.detail}`).join('; ')}`);
  }
  const r = result.receipt;
  print(`receipt verified: ${r?.claim}, ${r?.credits} credits, request ${r?.request_id}, issued ${r?.issued_at} by ${r?.issuer}`);
}

interface InclusionFile {
  leafIndex: number;
  treeSize: number;
  leafHash: Uint8Array;
  hashes: Uint8Array[];
  file: string;
}
interface ConsistencyFile {
  first: number;
  second: number;
  hashes: Uint8Array[];
  file: string;
}

function hashes(value: unknown): Uint8Array[] | null {
  if (!Array.isArray(value)) return null;
  const out = value.map((h) => (typeof h === 'string' ? fromBase64(h) : null));
  return out.every((h): h is Uint8Array => h !== null && h.length === 32) ? out : null;
}

/**
 * Offline audit from saved files: every checkpoint's signature, consistency between each pair of consecutive
 * checkpoints, and each receipt's signature and inclusion under a checkpoint. Files are recognised by content:
 * checkpoints (signed notes), JWKS, saved responses or receipts, inclusion and consistency proofs as the
 * /v1/receipts/log endpoints return them.
 */
export async function auditCommand(cfg: NotaryConfig, files: string[], opts: { jwks?: string; origin?: string; local?: boolean }, print: Print = stdout): Promise<void> {
  if (opts.local) {
    const storage = await openStorage(cfg);
    try {
      const receipts = await openReceipts(storage.db, receiptSettings(cfg));
      const started = Date.now();
      const result = await receipts.log.verifyAll({
        onProgress: (done, total) => process.stderr.write(`\rchecked ${done}/${total} receipts (${Math.round(done / Math.max(0.001, (Date.now() - started) / 1000))}/s)`),
      });
      process.stderr.write('\n');
      print(`ok    local log   ${result.size} receipts re-hashed; every stored node and ${result.checkpoints} checkpoint roots match`);
    } finally {
      await storage.close();
    }
    if (files.length === 0) return;
  }
  if (files.length === 0) throw new NotaryError('invalid_request', 'name the saved files to audit (checkpoints, receipts or responses, proofs, JWKS), or pass --local');

  const checkpointNotes: Array<{ note: string; file: string }> = [];
  const savedReceipts: Array<{ receipt: unknown; body: Record<string, unknown> | undefined; file: string }> = [];
  const inclusions: InclusionFile[] = [];
  const consistencies: ConsistencyFile[] = [];
  let keys: VerificationKey[] | null = opts.jwks ? await loadJwks(opts.jwks) : null;

  for (const file of files) {
    const text = (() => {
      try {
        return readFileSync(file, 'utf8');
      } catch (err) {
        throw new NotaryError('invalid_request', `cannot read ${file}: ${(err as Error).message}`);
      }
    })();
    if (text.includes('\n\n\u2014 ')) {
      checkpointNotes.push({ note: text, file });
      continue;
    }
    const doc = readJson(file);
    if (isRecord(doc) && Array.isArray(doc['keys'])) {
      if (!keys) keys = await loadJwks(file);
    } else if (isRecord(doc) && typeof doc['leaf_index'] === 'number' && typeof doc['tree_size'] === 'number' && typeof doc['leaf_hash'] === 'string') {
      const leafHash = fromBase64(doc['leaf_hash']);
      const path = hashes(doc['hashes']);
      if (!leafHash || !path) throw new NotaryError('receipt_verification_failed', `${file}: malformed inclusion proof`);
      inclusions.push({ leafIndex: doc['leaf_index'], treeSize: doc['tree_size'], leafHash, hashes: path, file });
      if (typeof doc['checkpoint'] === 'string') checkpointNotes.push({ note: doc['checkpoint'], file });
    } else if (isRecord(doc) && typeof doc['first'] === 'number' && typeof doc['second'] === 'number') {
      const path = hashes(doc['hashes']);
      if (!path) throw new NotaryError('receipt_verification_failed', `${file}: malformed consistency proof`);
      consistencies.push({ first: doc['first'], second: doc['second'], hashes: path, file });
    } else if (isRecord(doc) && ('notary_receipt' in doc || 'signature' in doc)) {
      savedReceipts.push({ ...splitSaved(doc), file });
    } else {
      throw new NotaryError('invalid_request', `${file}: not a checkpoint, JWKS, receipt, response or proof`);
    }
  }
  if (!keys) throw new NotaryError('invalid_request', 'no keys: pass --jwks FILE|URL or include a saved JWKS among the files');
  if (checkpointNotes.length === 0) throw new NotaryError('invalid_request', 'no checkpoint among the files: save one from /v1/receipts/log/checkpoint');

  const failures: string[] = [];
  const fail = (line: string) => {
    failures.push(line);
    print(`FAIL  ${line}`);
  };
  const origin = opts.origin ?? checkpointNotes[0]?.note.split('\n')[0] ?? '';
  const verifiers = keys.map((k) => ({ name: origin, publicKey: k.publicKey }));
  const checkpoints: Array<Checkpoint & { file: string }> = [];
  for (const { note, file } of checkpointNotes) {
    try {
      const cp = openCheckpoint(note, verifiers, origin);
      checkpoints.push({ ...cp, file });
      print(`ok    checkpoint  ${file}: size ${cp.size}, root ${toBase64(cp.rootHash)}, signed by a published key`);
    } catch (err) {
      fail(`checkpoint  ${file}: ${(err as Error).message}`);
    }
  }
  checkpoints.sort((a, b) => a.size - b.size);
  for (let i = 1; i < checkpoints.length; i++) {
    const a = checkpoints[i - 1] as Checkpoint & { file: string };
    const b = checkpoints[i] as Checkpoint & { file: string };
    if (a.size === 0) {
      print(`ok    consistency checkpoint ${b.size} extends the empty tree`);
      continue;
    }
    if (a.size === b.size) {
      if (toBase64(a.rootHash) !== toBase64(b.rootHash)) fail(`consistency two checkpoints of size ${a.size} have different roots (${a.file}, ${b.file}): the log forked`);
      continue;
    }
    const proof = consistencies.find((p) => p.first === a.size && p.second === b.size);
    if (!proof) {
      fail(`consistency no proof from ${a.size} to ${b.size}: save /v1/receipts/log/consistency?first=${a.size}&second=${b.size}`);
    } else if (verifyConsistency(a.size, b.size, a.rootHash, b.rootHash, proof.hashes)) {
      print(`ok    consistency checkpoint ${b.size} extends checkpoint ${a.size} (${proof.file})`);
    } else {
      fail(`consistency ${proof.file}: the checkpoint of size ${b.size} does not extend the one of size ${a.size}: the log was rewritten`);
    }
  }
  for (const saved of savedReceipts) {
    const result = verifyReceipt({ receipt: saved.receipt, keys, ...(saved.body ? { responseBody: saved.body } : {}) });
    const bad = result.checks.filter((c) => c.ok === false);
    if (!result.ok || !result.receipt) {
      fail(`receipt     ${saved.file}: ${bad.map((c) => `${c.name}: ${c.detail}`).join('; ')}`);
      continue;
    }
    const leaf = receiptLeafHash(result.receipt);
    const leafB64 = toBase64(leaf);
    const candidates = inclusions.filter((p) => toBase64(p.leafHash) === leafB64);
    const matched = candidates.map((p) => ({ p, cp: checkpoints.find((c) => c.size === p.treeSize) })).find((x) => x.cp);
    if (!matched?.cp) {
      fail(
        `inclusion   ${saved.file}: no saved inclusion proof at the size of a checkpoint held` +
          ` (save /v1/receipts/log/inclusion?leaf_hash=${encodeURIComponent(leafB64)}&tree_size=${checkpoints.at(-1)?.size ?? 'N'})`,
      );
    } else if (verifyInclusion(matched.p.leafIndex, matched.p.treeSize, leaf, matched.p.hashes, matched.cp.rootHash)) {
      print(`ok    receipt     ${saved.file}: signature valid, leaf ${matched.p.leafIndex} included under checkpoint ${matched.cp.size}`);
    } else {
      fail(`inclusion   ${saved.file}: the proof does not lead to the root of checkpoint ${matched.cp.size}: the receipt is not in the log the checkpoint commits to`);
    }
  }
  if (failures.length > 0) throw new NotaryError('receipt_verification_failed', `audit failed: ${failures.length} problem(s), first: ${failures[0]}`);
  print(`audit passed: ${checkpoints.length} checkpoint(s), ${savedReceipts.length} receipt(s)`);
}
