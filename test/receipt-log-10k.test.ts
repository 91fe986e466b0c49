import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../payments/plugins.js'; // the registered plug-ins' migrations
import {
  openCheckpoint,
  openReceipts,
  parseVerifierKey,
  receiptLeafHash,
  verifyConsistency,
  verifyInclusion,
  type LogCheckpoint,
  type NotaryReceipt,
  type ReceiptSettings,
  type Receipts,
} from '../payments/receipts/index.js';
import { newRequestSalt, toBase64 } from '../payments/crypto/index.js';
import { migrateToLatest, openPostgres, openSqlite, type Storage } from '../storage/db.js';
import { createDatabase, startPostgres, type TestPostgres } from '../testkit/postgres.js';

/** The issue's scale test: 10,000 receipts in the log, on both engines. */
const COUNT = 10_000;
const CHECKPOINT_SIZES = [1, 2, 3, 7, 8, 100, 1000, 1024, 4097, 9999, COUNT];

let pgServer: TestPostgres | undefined;
const dirs: string[] = [];
const opened: Storage[] = [];
beforeAll(async () => {
  pgServer = await startPostgres();
}, 120_000);
afterAll(async () => {
  for (const s of opened) await s.close().catch(() => undefined);
  pgServer?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function open(engine: 'sqlite' | 'postgres', dir: string, name: string): Promise<Storage> {
  let storage: Storage;
  if (engine === 'sqlite') {
    storage = openSqlite(path.join(dir, `${name}.sqlite`));
  } else {
    if (!pgServer) throw new Error('PostgreSQL did not start');
    storage = openPostgres(await createDatabase(pgServer.url, `${name}_${Date.now()}_${Math.floor(Math.random() * 1e6)}`));
  }
  opened.push(storage);
  await migrateToLatest(storage);
  return storage;
}

describe.each(['sqlite', 'postgres'] as const)('10,000 receipts on %s', (engine) => {
  let dir: string;
  let receipts: Receipts;
  let settings: ReceiptSettings;
  const issued: NotaryReceipt[] = [];
  const checkpoints: LogCheckpoint[] = [];
  const verifiers = () => receipts.verifierKeys().map(parseVerifierKey);

  it('appends 10,000 signed receipts with checkpoints along the way', async () => {
    dir = mkdtempSync(path.join(tmpdir(), `notary-10k-${engine}-`));
    dirs.push(dir);
    settings = { issuer: 'https://search.example.org', origin: 'search.example.org/receipt-log', keyFile: path.join(dir, 'keys.json'), createKeyFile: true, checkpointIntervalMs: 0 };
    receipts = await openReceipts((await open(engine, dir, 'log')).db, settings);
    const body = new TextEncoder().encode('{"query":"q","depth":1}');
    for (let i = 0; i < COUNT; i++) {
      issued.push(
        await receipts.issuer.issue({ claim: i % 2 ? 'extract_call_consumed' : 'search_call_consumed', credits: i % 5, requestId: `req_${String(i).padStart(20, '0')}`, requestBody: body, requestSalt: newRequestSalt(), responseBody: { i } }),
      );
      if (CHECKPOINT_SIZES.includes(i + 1)) checkpoints.push(await receipts.log.checkpoint());
    }
    expect(checkpoints.map((c) => c.size)).toEqual(CHECKPOINT_SIZES);
  }, 600_000);

  it('every inclusion proof verifies against the signed checkpoint of 10,000', async () => {
    const last = openCheckpoint((checkpoints.at(-1) as LogCheckpoint).note, verifiers(), settings.origin);
    for (const [i, receipt] of issued.entries()) {
      const leaf = receiptLeafHash(receipt);
      const proof = await receipts.log.inclusionProofAt(i, COUNT);
      expect(toBase64(proof.leafHash)).toBe(toBase64(leaf));
      if (!verifyInclusion(i, COUNT, leaf, proof.hashes, last.rootHash)) throw new Error(`inclusion proof of leaf ${i} does not verify`);
    }
    // And under earlier checkpoints, for the leaves each one holds (a sample of them in the large ones).
    for (const cp of checkpoints.slice(0, -1)) {
      for (let i = 0; i < cp.size; i += Math.max(1, Math.floor(cp.size / 50))) {
        const proof = await receipts.log.inclusionProof(receiptLeafHash(issued[i] as NotaryReceipt), cp.size);
        expect(verifyInclusion(i, cp.size, proof.leafHash, proof.hashes, cp.rootHash), `${i} under ${cp.size}`).toBe(true);
      }
    }
  }, 600_000);

  it('consistency proofs between checkpoints of every pair of sizes verify', async () => {
    let pairs = 0;
    for (const a of checkpoints) {
      for (const b of checkpoints) {
        if (a.size > b.size) continue;
        const proof = await receipts.log.consistencyProof(a.size, b.size);
        expect(verifyConsistency(a.size, b.size, a.rootHash, b.rootHash, proof.hashes), `${a.size} -> ${b.size}`).toBe(true);
        pairs++;
      }
    }
    expect(pairs).toBe((CHECKPOINT_SIZES.length * (CHECKPOINT_SIZES.length + 1)) / 2);
    expect(await receipts.log.verifyAll()).toEqual({ size: COUNT, checkpoints: CHECKPOINT_SIZES.length });
  }, 600_000);

  it('a forged checkpoint signature is detected', () => {
    const note = (checkpoints.at(-1) as LogCheckpoint).note;
    const start = note.lastIndexOf(' ') + 1;
    for (const byte of [0, 4, 40, 67]) {
      const sig = Buffer.from(note.slice(start, -1), 'base64');
      sig[byte] = (sig[byte] ?? 0) ^ 0x80;
      expect(() => openCheckpoint(`${note.slice(0, start)}${sig.toString('base64')}\n`, verifiers())).toThrow();
    }
    // The right signature over another tree size or root.
    expect(() => openCheckpoint(note.replace(`\n${COUNT}\n`, `\n${COUNT + 1}\n`), verifiers())).toThrow(/does not verify/);
  });

  it('a rewritten tree is detected by consistency and inclusion proofs', async () => {
    // The operator replays the log into a fresh database with receipt 2000 replaced by one of their making,
    // and signs checkpoints with the real key.
    const forger = await openReceipts((await open(engine, dir, 'forged')).db, settings);
    const replaced = forger.issuer.sign({ claim: 'search_call_consumed', credits: 0, requestId: 'req_forged000000000000', requestBody: new Uint8Array(), requestSalt: newRequestSalt(), responseBody: {} });
    for (const [i, receipt] of issued.entries()) await forger.log.append(i === 2000 ? replaced : receipt);
    const forged = await forger.log.checkpoint();
    expect(openCheckpoint(forged.note, verifiers()).size).toBe(COUNT);
    const honest = checkpoints.at(-1) as LogCheckpoint;
    expect(toBase64(forged.rootHash)).not.toBe(toBase64(honest.rootHash));
    // An auditor holding the checkpoint of 4097 asks the forger to prove the new tree extends it: impossible.
    const held = checkpoints.find((c) => c.size === 4097) as LogCheckpoint;
    const proof = await forger.log.consistencyProof(4097, COUNT);
    expect(verifyConsistency(4097, COUNT, held.rootHash, forged.rootHash, proof.hashes)).toBe(false);
    // A checkpoint taken before the replaced receipt still proves consistent (the log only diverges at 2000).
    const early = checkpoints.find((c) => c.size === 1024) as LogCheckpoint;
    expect(verifyConsistency(1024, COUNT, early.rootHash, forged.rootHash, (await forger.log.consistencyProof(1024, COUNT)).hashes)).toBe(true);
    // The dropped receipt's holder finds no proof; a proof for its index leads to a different root.
    await expect(forger.log.inclusionProof(receiptLeafHash(issued[2000] as NotaryReceipt), COUNT)).rejects.toMatchObject({ code: 'receipt_not_found' });
    const atIndex = await forger.log.inclusionProofAt(2000, COUNT);
    expect(verifyInclusion(2000, COUNT, receiptLeafHash(issued[2000] as NotaryReceipt), atIndex.hashes, forged.rootHash)).toBe(false);
  }, 600_000);
});
