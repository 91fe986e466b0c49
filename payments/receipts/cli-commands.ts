import { readFileSync } from 'node:fs';
import type { NotaryConfig } from '../../core/index.js';
import { NotaryError } from '../../core/index.js';
import type { Storage } from '../../storage/index.js';
import { parseJwks, type VerificationKey } from '../crypto/jwk.js';
import { auditSavedFiles, jwksAmong, splitSavedResponse, type AuditInput } from './audit.js';
import { openReceipts, receiptSettings } from './index.js';
import { ReceiptKeyring } from './keyring.js';
import { verifyReceipt, type ReceiptCheck } from './receipt.js';
import './errors.js'; // registers the receipt error codes this file throws

type Print = (line: string) => void;
const stdout: Print = (line) => process.stdout.write(`${line}\n`);

function isoOf(seconds: number): string {
  return `${new Date(seconds * 1000).toISOString().slice(0, 19)}Z`;
}

export async function rotateKeyCommand(cfg: NotaryConfig, print: Print = stdout): Promise<void> {
  const file = receiptSettings(cfg).keyFile;
  const { current, retired } = ReceiptKeyring.rotate(file);
  if (retired) print(`retired ${retired.kid} (signs no more; receipts it signed keep verifying: valid ${isoOf(retired.notBefore)} .. ${isoOf(retired.notAfter ?? 0)})`);
  print(`current ${current.kid} (valid from ${isoOf(current.notBefore)}) in ${file}`);
  print('a running `notary serve` signs with the new key from its next receipt; the JWKS lists both');
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new NotaryError('invalid_request', `cannot read ${file}: ${(err as Error).message}`);
  }
}

function keysFrom(document: unknown, source: string): VerificationKey[] {
  try {
    return parseJwks(document);
  } catch (err) {
    throw new NotaryError('receipt_verification_failed', `the JWKS from ${source} is not usable: ${(err as Error).message}`);
  }
}

/** Reads a JWKS from a file or an http(s) URL. */
async function loadJwks(source: string): Promise<VerificationKey[]> {
  if (!/^https?:\/\//i.test(source)) {
    try {
      return keysFrom(JSON.parse(readText(source)), source);
    } catch (err) {
      if (err instanceof NotaryError) throw err;
      throw new NotaryError('receipt_verification_failed', `the JWKS file ${source} is not valid JSON`);
    }
  }
  let res: Response;
  try {
    res = await fetch(source, { signal: AbortSignal.timeout(10_000), headers: { accept: 'application/jwk-set+json, application/json' } });
  } catch (err) {
    throw new NotaryError('receipt_verification_failed', `cannot fetch the JWKS from ${source}: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!res.ok) throw new NotaryError('receipt_verification_failed', `the JWKS at ${source} answered HTTP ${res.status}`);
  return keysFrom(await res.json().catch(() => null), source);
}

function printChecks(checks: ReceiptCheck[], print: Print): void {
  for (const c of checks) print(`${c.ok === true ? 'ok  ' : c.ok === false ? 'FAIL' : '--  '}  ${c.name.padEnd(15)} ${c.detail}`);
}

export async function verifyCommand(_cfg: NotaryConfig, file: string, opts: { jwks?: string; request?: string }, print: Print = stdout): Promise<void> {
  let document: unknown;
  try {
    document = JSON.parse(readText(file));
  } catch (err) {
    if (err instanceof NotaryError) throw err;
    throw new NotaryError('receipt_verification_failed', `${file} is not valid JSON`);
  }
  const { receipt, body } = splitSavedResponse(document);
  let source = opts.jwks;
  if (!source) {
    const issuer = typeof receipt === 'object' && receipt !== null && typeof (receipt as { issuer?: unknown }).issuer === 'string' ? (receipt as { issuer: string }).issuer : '';
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

export async function auditCommand(
  cfg: NotaryConfig,
  files: string[],
  opts: { jwks?: string; origin?: string; local?: boolean },
  withStorage: <T>(fn: (storage: Storage) => Promise<T>) => Promise<T>,
  print: Print = stdout,
): Promise<void> {
  if (opts.local) {
    await withStorage(async (storage) => {
      const receipts = await openReceipts(storage.db, receiptSettings(cfg));
      const started = Date.now();
      const result = await receipts.log.verifyAll({
        onProgress: (done, total) => process.stderr.write(`\rchecked ${done}/${total} receipts (${Math.round(done / Math.max(0.001, (Date.now() - started) / 1000))}/s)`),
      });
      if (result.size > 0) process.stderr.write('\n');
      print(`ok    local log   ${result.size} receipts re-hashed; every stored node and ${result.checkpoints} checkpoint roots match`);
    });
    if (files.length === 0) return;
  }
  if (files.length === 0) throw new NotaryError('invalid_request', 'name the saved files to audit (checkpoints, receipts or responses, proofs, JWKS), or pass --local');
  const inputs: AuditInput[] = files.map((name) => ({ name, text: readText(name) }));
  let keys: VerificationKey[];
  if (opts.jwks) {
    keys = await loadJwks(opts.jwks);
  } else {
    const found = jwksAmong(inputs);
    if (found === undefined) throw new NotaryError('invalid_request', 'no keys: pass --jwks FILE|URL or include a saved JWKS among the files');
    keys = keysFrom(found, 'the saved files');
  }
  const report = auditSavedFiles(inputs, keys, opts.origin);
  for (const line of report.lines) print(`${line.ok ? 'ok  ' : 'FAIL'}  ${line.topic.padEnd(11)} ${line.detail}`);
  if (!report.ok) {
    const failures = report.lines.filter((l) => !l.ok);
    throw new NotaryError('receipt_verification_failed', `audit failed: ${failures.length} problem(s), first: ${failures[0]?.topic} ${failures[0]?.detail}`);
  }
  print(`audit passed: ${report.checkpoints} checkpoint(s), ${report.receipts} receipt(s)`);
}
