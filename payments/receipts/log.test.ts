import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotaryError } from '../../core/errors.js';
import '../plugins.js'; // the registered plug-ins' migrations (the receipt log's tables)
import { migrateToLatest, openPostgres, openSqlite, type Storage } from '../../storage/db.js';
import { createDatabase, startPostgres, type TestPostgres } from '../../testkit/postgres.js';
import {
  formatVerifierKey,
  openCheckpoint,
  openReceipts,
  parseNotarySignHeader,
  parseVerifierKey,
  receiptLeafHash,
  saltedResponseBody,
  ReceiptKeyring,
  verifyConsistency,
  verifyInclusion,
  verifyReceipt,
  type ReceiptSettings,
  type Receipts,
} from './index.js';
import { newRequestSalt, parseJwks } from '../crypto/index.js';

let pgServer: TestPostgres | undefined;
const dirs: string[] = [];
beforeAll(async () => {
  pgServer = await startPostgres();
}, 120_000);
const opened: Storage[] = [];
afterAll(async () => {
  for (const s of opened) await s.close().catch(() => undefined);
  pgServer?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'notary-log-'));
  dirs.push(dir);
  return dir;
}

interface Backend {
  /** Opens (and migrates) the same database every call. */
  open(): Promise<Storage>;
}

async function track(storage: Storage): Promise<Storage> {
  opened.push(storage);
  await migrateToLatest(storage);
  return storage;
}

async function sqliteBackend(): Promise<Backend> {
  const file = path.join(tempDir(), 'notary.sqlite');
  return { open: async () => track(openSqlite(file)) };
}

async function postgresBackend(): Promise<Backend> {
  if (!pgServer) throw new Error('PostgreSQL did not start');
  const url = await createDatabase(pgServer.url, `receipts_${Date.now()}_${Math.floor(Math.random() * 1e6)}`);
  return { open: async () => track(openPostgres(url)) };
}

function settings(dir: string): ReceiptSettings {
  return { issuer: 'https://search.example.org', origin: 'search.example.org/receipt-log', keyFile: path.join(dir, 'receipt-keys.json'), createKeyFile: true, checkpointIntervalMs: 0 };
}

const requestBody = new TextEncoder().encode('{"query":"vacuum","depth":1}');
const responseBody = (i: number) => ({ query: 'vacuum', depth: 1, results: [{ url: `http://h/${i}`, title: 't', snippet: 's', rerank_score: i / 1000 }], credits_used: 1 });

const requestSalt = newRequestSalt();
/** The body as the caller saw it: with the request salt its receipt's request_digest is keyed with. */
const savedBody = (i: number) => saltedResponseBody(responseBody(i), requestSalt);

async function issue(receipts: Receipts, i: number) {
  return receipts.issuer.issue({ claim: 'search_call_consumed', credits: 1, requestId: `req_test${String(i).padStart(16, '0')}`, requestBody, requestSalt, responseBody: responseBody(i) });
}

function verifiersOf(receipts: Receipts) {
  return receipts.verifierKeys().map(parseVerifierKey);
}

async function expectCode(promise: Promise<unknown>, code: string): Promise<void> {
  try {
    await promise;
  } catch (err) {
    expect(err instanceof NotaryError ? err.code : String(err)).toBe(code);
    return;
  }
  throw new Error(`expected ${code}`);
}

describe('X-Notary-Sign header', () => {
  it('accepts "required" only', () => {
    expect(parseNotarySignHeader(undefined)).toBe(false);
    expect(parseNotarySignHeader('required')).toBe(true);
    expect(parseNotarySignHeader(' Required ')).toBe(true);
    for (const bad of ['', 'yes', 'true', 'required, required', 'optional', '1']) {
      expect(() => parseNotarySignHeader(bad), bad).toThrow(expect.objectContaining({ code: 'invalid_notary_sign', status: 400 }));
    }
    expect(() => parseNotarySignHeader(['required', 'required'])).toThrow(expect.objectContaining({ code: 'invalid_notary_sign' }));
  });
});

describe.each([
  ['sqlite', sqliteBackend],
  ['postgres', postgresBackend],
] as const)('receipt log on %s', (_name, makeBackend) => {
  it('issues receipts that verify, appends them, proves inclusion and consistency, and survives a restart', async () => {
    const backend = await makeBackend();
    const dir = tempDir();
    let storage = await backend.open();
    let receipts = await openReceipts(storage.db, settings(dir));
    const issued = [];
    const checkpoints = [];
    for (let i = 0; i < 37; i++) {
      issued.push(await issue(receipts, i));
      if ([1, 2, 5, 16, 17].includes(i + 1)) checkpoints.push(await receipts.log.checkpoint());
    }
    const keys = parseJwks(receipts.keyring.jwks());
    for (const [i, receipt] of issued.entries()) {
      const result = verifyReceipt({ receipt, keys, responseBody: savedBody(i), requestBody });
      expect(result.ok, JSON.stringify(result.checks)).toBe(true);
    }
    await storage.close();

    // Restart: new handles, new ReceiptLog; the frontier comes back from storage.
    storage = await backend.open();
    receipts = await openReceipts(storage.db, settings(dir));
    for (let i = 37; i < 45; i++) issued.push(await issue(receipts, i));
    const latest = await receipts.log.checkpoint();
    expect(latest.size).toBe(45);
    const verified = openCheckpoint(latest.note, verifiersOf(receipts), 'search.example.org/receipt-log');
    for (const [i, receipt] of issued.entries()) {
      const proof = await receipts.log.inclusionProof(receiptLeafHash(receipt), latest.size);
      expect(proof.leafIndex).toBe(i);
      expect(verifyInclusion(proof.leafIndex, proof.treeSize, receiptLeafHash(receipt), proof.hashes, verified.rootHash)).toBe(true);
    }
    checkpoints.push(latest);
    for (const a of checkpoints) {
      for (const b of checkpoints) {
        if (a.size > b.size) continue;
        const proof = await receipts.log.consistencyProof(a.size, b.size);
        expect(verifyConsistency(a.size, b.size, a.rootHash, b.rootHash, proof.hashes), `${a.size} -> ${b.size}`).toBe(true);
      }
    }
    // The same checkpoint is served until the log grows.
    expect((await receipts.log.checkpoint()).note).toBe(latest.note);
    await expectCode(receipts.log.inclusionProofAt(44, 44), 'receipt_not_found');
    await expectCode(receipts.log.inclusionProofAt(0, 46), 'tree_size_out_of_range');
    await expectCode(receipts.log.consistencyProof(0, 5), 'tree_size_out_of_range');
    await expectCode(receipts.log.inclusionProof(new Uint8Array(32), 45), 'receipt_not_found');
    await storage.close();
  });

  it('two processes appending to one log get consecutive leaves and a consistent tree', async () => {
    const backend = await makeBackend();
    const dir = tempDir();
    const a = await backend.open();
    // SQLite: one handle per process in production; a second handle in the same process would block the event loop.
    const b = _name === 'postgres' ? await backend.open() : a;
    const first = await openReceipts(a.db, settings(dir));
    const second = await openReceipts(b.db, settings(dir));
    const issued = [];
    for (let i = 0; i < 20; i++) issued.push(await issue(i % 3 === 0 ? second : first, i));
    await Promise.all([issue(first, 100), issue(second, 101), issue(first, 102), issue(second, 103)]);
    const checkpoint = await first.log.checkpoint();
    expect(checkpoint.size).toBe(24);
    for (const receipt of issued) {
      const proof = await second.log.inclusionProof(receiptLeafHash(receipt), checkpoint.size);
      expect(verifyInclusion(proof.leafIndex, checkpoint.size, receiptLeafHash(receipt), proof.hashes, checkpoint.rootHash)).toBe(true);
    }
    expect(await second.log.rootHash(24)).toEqual(checkpoint.rootHash);
    await a.close();
    if (b !== a) await b.close();
  });

  it('after rotate-key old receipts still verify, new ones use the new key, checkpoints verify with either', async () => {
    const backend = await makeBackend();
    const dir = tempDir();
    const storage = await backend.open();
    const receipts = await openReceipts(storage.db, settings(dir));
    const old = await issue(receipts, 0);
    const oldCheckpoint = await receipts.log.checkpoint();
    const { current, retired } = ReceiptKeyring.rotate(settings(dir).keyFile, new Date());
    expect(retired?.kid).toBe(old.kid);
    // The server's clock is now past the rotation; the new key signs.
    const fresh = await receipts.issuer.issue({ claim: 'extract_call_consumed', credits: 2, requestId: 'req_after_rotation_0001', requestBody, requestSalt, responseBody: responseBody(1) });
    expect(fresh.kid).toBe(current.kid);
    const keys = parseJwks(receipts.keyring.jwks());
    expect(verifyReceipt({ receipt: old, keys, responseBody: savedBody(0) }).ok).toBe(true);
    expect(verifyReceipt({ receipt: fresh, keys, responseBody: savedBody(1) }).ok).toBe(true);
    const unknown = verifyReceipt({ receipt: { ...old, kid: current.kid.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')) }, keys });
    expect(unknown.checks.find((c) => c.name === 'kid')?.ok).toBe(false);
    const newCheckpoint = await receipts.log.checkpoint();
    const verifiers = verifiersOf(receipts);
    expect(openCheckpoint(oldCheckpoint.note, verifiers).size).toBe(1);
    expect(openCheckpoint(newCheckpoint.note, verifiers).size).toBe(2);
    // Only the new key verifies the new checkpoint.
    expect(() => openCheckpoint(newCheckpoint.note, [parseVerifierKey(formatVerifierKey(receipts.settings.origin, (retired as { publicKey: Uint8Array }).publicKey))])).toThrow();
    await storage.close();
  });

  it('a rewritten tree is detected: consistency with the old checkpoint fails and the service refuses to start', async () => {
    const backend = await makeBackend();
    const dir = tempDir();
    let storage = await backend.open();
    let receipts = await openReceipts(storage.db, settings(dir));
    const issued = [];
    for (let i = 0; i < 12; i++) issued.push(await issue(receipts, i));
    const published = await receipts.log.checkpoint();
    await storage.close();

    // An operator rewrites history: a fresh log in the same database with receipt 3 left out, tree rebuilt
    // consistently and a new checkpoint of the same size signed with the same key.
    storage = await backend.open();
    for (const table of ['receipt_log_entries', 'receipt_log_nodes', 'receipt_log_checkpoints'] as const) await storage.db.deleteFrom(table).execute();
    await sql`update receipt_log_state set tree_size = 0`.execute(storage.db);
    receipts = await openReceipts(storage.db, settings(dir));
    for (const [i, r] of issued.entries()) if (i !== 3) await receipts.log.append(r);
    await issue(receipts, 99);
    const rewritten = await receipts.log.checkpoint();
    expect(rewritten.size).toBe(published.size);
    // Signed by the real key, so the signature alone does not reveal it...
    expect(openCheckpoint(rewritten.note, verifiersOf(receipts)).size).toBe(12);
    // ...but an auditor holding the earlier checkpoint sees two different roots for one size,
    expect(verifyConsistency(published.size, rewritten.size, published.rootHash, rewritten.rootHash, [])).toBe(false);
    // and the dropped receipt has no inclusion proof any more.
    await expectCode(receipts.log.inclusionProof(receiptLeafHash(issued[3] as (typeof issued)[number]), 12), 'receipt_not_found');
    await issue(receipts, 100);
    const later = await receipts.log.checkpoint();
    const proof = await receipts.log.consistencyProof(published.size, later.size);
    expect(verifyConsistency(published.size, later.size, published.rootHash, later.rootHash, proof.hashes)).toBe(false);

    expect(await receipts.log.verifyAll({ batch: 5 })).toEqual({ size: 13, checkpoints: 2 });
    // A receipt changed in place: the full audit finds it.
    const entry = (await storage.db.selectFrom('receipt_log_entries').select('receipt').where('leaf_index', '=', 5).executeTakeFirstOrThrow()).receipt;
    await storage.db.updateTable('receipt_log_entries').set({ receipt: entry.replace('"credits":1', '"credits":0') }).where('leaf_index', '=', 5).execute();
    await expectCode(receipts.log.verifyAll(), 'receipt_log_corrupt');
    // A node on the right edge of the last checkpoint changed: the start-up check refuses to extend the log.
    await storage.db.updateTable('receipt_log_nodes').set({ hash: new Uint8Array(32) }).where('level', '=', 0).where('node_index', '=', 12).execute();
    await expectCode(openReceipts(storage.db, settings(dir)), 'receipt_log_corrupt');
    await storage.close();
  });
});
