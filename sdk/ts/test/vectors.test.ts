import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  apiKeyChecksum,
  apiKeyProblem,
  buildEnvelope,
  canonicalJson,
  crc32,
  envelopeSigningInput,
  fromBase64,
  fromHex,
  jwkThumbprint,
  leafHash,
  openCheckpoint,
  openNote,
  parseVerifierKey,
  publicKeyFromSeed,
  receiptLeaf,
  receiptSigningInput,
  responseDigest,
  saltedRequestDigest,
  rootFromInclusionProof,
  sha256Digest,
  signEd25519,
  signEnvelope,
  splitCredits,
  toHex,
  verifyConsistency,
  verifyEd25519,
  verifyInclusion,
  verifyReceipt,
  type Envelope,
  type NotaryReceipt,
  type UnsignedEnvelope,
} from '../src/index.js';

/** The shared conformance vectors (spec/vectors), the same files the Python and Go libraries pass. */
const vectors = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../spec/vectors');
const load = <T>(name: string): T => JSON.parse(readFileSync(path.join(vectors, name), 'utf8')) as T;

function ieee(hex: string): number {
  return new DataView(fromHex(hex).buffer).getFloat64(0);
}

describe('JCS (jcs.json)', () => {
  const v = load<{ cases: Array<{ name: string; input: string; expected_hex: string }>; numbers: Array<{ ieee_hex: string; expected: string }>; errors: Array<{ ieee_hex: string }> }>('jcs.json');
  it.each(v.cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    expect(toHex(new TextEncoder().encode(canonicalJson(JSON.parse(c.input))))).toBe(c.expected_hex);
  });
  it('numbers', () => {
    for (const n of v.numbers) expect(canonicalJson(ieee(n.ieee_hex)), n.ieee_hex).toBe(n.expected);
    for (const n of v.errors) expect(() => canonicalJson(ieee(n.ieee_hex))).toThrow();
  });
});

describe('API keys (api-keys.json)', () => {
  const v = load<{ valid: Array<{ secret: string; checksum: string; key: string; crc32: number }>; invalid: Array<{ key: string; why: string }> }>('api-keys.json');
  it('valid keys: checksum, CRC-32', () => {
    for (const k of v.valid) {
      expect(crc32(new TextEncoder().encode(k.secret))).toBe(k.crc32);
      expect(apiKeyChecksum(k.secret)).toBe(k.checksum);
      expect(apiKeyProblem(k.key)).toBeNull();
    }
  });
  it('invalid keys are refused before any call', () => {
    for (const k of v.invalid) expect(apiKeyProblem(k.key), k.why).not.toBeNull();
  });
});

describe('digests (digests.json)', () => {
  const v = load<{ request: Array<{ body_hex: string; digest: string; salt?: string }>; response: Array<{ body: Record<string, unknown>; jcs: string; digest: string }> }>('digests.json');
  it('request and response digests', async () => {
    for (const r of v.request) {
      const bytes = fromHex(r.body_hex);
      expect(r.salt === undefined ? await sha256Digest(bytes) : await saltedRequestDigest(bytes, r.salt)).toBe(r.digest);
    }
    for (const r of v.response) {
      expect(canonicalJson({ ...r.body, notary_receipt: undefined })).toBe(r.jcs);
      expect(await responseDigest(r.body)).toBe(r.digest);
    }
  });
});

interface ReceiptCase {
  name: string;
  digest_version: 1 | 2;
  seed_hex: string;
  public_key_hex: string;
  jwk: { kty: 'OKP'; crv: 'Ed25519'; x: string; kid: string; nbf: number };
  request_body_hex: string;
  response_body: Record<string, unknown>;
  unsigned_receipt_jcs: string;
  signed_bytes_hex: string;
  signature: string;
  receipt: NotaryReceipt;
  leaf_hex: string;
  leaf_hash_hex: string;
}

describe('receipts (receipts.json)', () => {
  const v = load<{ known_answers: { rfc8032_test1: { seed_hex: string; public_key_hex: string; message_hex: string; signature_hex: string }; rfc8037_thumbprint: { x: string; kid: string } }; cases: ReceiptCase[] }>('receipts.json');
  it('RFC 8032 and RFC 8037 known answers', async () => {
    const k = v.known_answers.rfc8032_test1;
    expect(toHex(await publicKeyFromSeed(fromHex(k.seed_hex)))).toBe(k.public_key_hex);
    expect(toHex(await signEd25519(fromHex(k.message_hex), fromHex(k.seed_hex)))).toBe(k.signature_hex);
    expect(await jwkThumbprint(v.known_answers.rfc8037_thumbprint.x)).toBe(v.known_answers.rfc8037_thumbprint.kid);
  });
  it.each(v.cases.map((c) => [c.name, c] as const))('%s: signs, verifies, refuses every change', async (_name, c) => {
    expect(toHex(receiptSigningInput(c.receipt))).toBe(c.signed_bytes_hex);
    expect(await jwkThumbprint(c.jwk.x)).toBe(c.jwk.kid);
    const signature = await signEd25519(fromHex(c.signed_bytes_hex), fromHex(c.seed_hex));
    expect(`ed25519:${Buffer.from(signature).toString('base64url')}`).toBe(c.signature);
    expect(toHex(receiptLeaf(c.receipt))).toBe(c.leaf_hex);
    expect(toHex(await leafHash(receiptLeaf(c.receipt)))).toBe(c.leaf_hash_hex);
    const jwks = { keys: [c.jwk] };
    const body = { ...c.response_body, notary_receipt: c.receipt };
    const ok = await verifyReceipt(body, jwks, { requestBody: fromHex(c.request_body_hex) });
    expect(ok.checks.filter((x) => !x.ok)).toEqual([]);
    expect(ok.valid).toBe(true);
    for (const field of Object.keys(c.receipt) as Array<keyof NotaryReceipt>) {
      const value = c.receipt[field];
      const changed = typeof value === 'number' ? value + 1 : field === 'signature' ? value.replace(/.(?=.{3}$)/, (ch) => (ch === 'A' ? 'B' : 'A')) : `${value}x`;
      const result = await verifyReceipt({ ...c.response_body, notary_receipt: { ...c.receipt, [field]: changed } }, jwks, { requestBody: fromHex(c.request_body_hex) });
      expect(result.valid, `changed ${field}`).toBe(false);
    }
    const firstKey = Object.keys(c.response_body)[0] as string;
    expect((await verifyReceipt({ ...body, [firstKey]: 'changed' }, jwks)).valid).toBe(false);
    expect((await verifyReceipt(body, jwks, { requestBody: '{}' })).valid).toBe(false);
    if (c.digest_version === 2) {
      // The salt lives in the body: without it (or with another) the request cannot be confirmed.
      const { notary_request_salt: salt, ...withoutSalt } = body as Record<string, unknown>;
      expect(typeof salt).toBe('string');
      const missing = await verifyReceipt(withoutSalt, jwks, { requestBody: fromHex(c.request_body_hex) });
      expect(missing.checks.find((x) => x.name === 'request_digest')?.ok).toBe(false);
      const other = await verifyReceipt(body, jwks, { requestBody: fromHex(c.request_body_hex), requestSalt: `${String(salt).slice(0, -1)}${String(salt).endsWith('A') ? 'B' : 'A'}` });
      expect(other.checks.find((x) => x.name === 'request_digest')?.ok).toBe(false);
    }
    expect((await verifyReceipt(body, { keys: [{ ...c.jwk, nbf: Date.parse(c.receipt.issued_at) / 1000 + 1 }] })).valid).toBe(false);
  });
});

describe('Merkle proofs (merkle.json)', () => {
  interface Tree {
    leaves_hex: string[];
    leaf_hashes_hex: string[];
    roots: Array<{ tree_size: number; root_hex: string }>;
    inclusion: Array<{ leaf_index: number; tree_size: number; proof_hex: string[] }>;
    consistency: Array<{ first: number; second: number; proof_hex: string[] }>;
  }
  const v = load<{ ct_test_tree: Tree; wide_tree: Tree; transparency_dev: { cases: Array<Record<string, unknown>> } }>('merkle.json');
  it.each([['ct_test_tree', v.ct_test_tree] as const, ['wide_tree', v.wide_tree] as const])('%s: leaves, inclusion and consistency', async (_name, tree) => {
    const leafHashes = await Promise.all(tree.leaves_hex.map((h) => leafHash(fromHex(h))));
    expect(leafHashes.map(toHex)).toEqual(tree.leaf_hashes_hex);
    const roots = new Map(tree.roots.map((r) => [r.tree_size, fromHex(r.root_hex)]));
    for (const p of tree.inclusion) {
      const root = roots.get(p.tree_size);
      if (!root) continue;
      const proof = p.proof_hex.map(fromHex);
      const leaf = leafHashes[p.leaf_index] as Uint8Array;
      expect(toHex((await rootFromInclusionProof(p.leaf_index, p.tree_size, leaf, proof)) ?? new Uint8Array())).toBe(toHex(root));
      expect(await verifyInclusion(p.leaf_index, p.tree_size, leaf, proof, root)).toBe(true);
      const flipped = Uint8Array.from(leaf);
      flipped[0] = (flipped[0] as number) ^ 1;
      expect(await verifyInclusion(p.leaf_index, p.tree_size, flipped, proof, root)).toBe(false);
    }
    for (const p of tree.consistency) {
      const first = roots.get(p.first);
      const second = roots.get(p.second);
      if (!first || !second) continue;
      expect(await verifyConsistency(p.first, p.second, first, second, p.proof_hex.map(fromHex)), `${p.first}->${p.second}`).toBe(true);
      expect(await verifyConsistency(p.first, p.second, second, first, p.proof_hex.map(fromHex))).toBe(p.first === p.second && toHex(first) === toHex(second));
    }
  });
  it('transparency-dev/merkle verification cases', async () => {
    for (const c of v.transparency_dev.cases) {
      const b = (s: unknown) => fromBase64(s as string);
      const proof = (c['proof_b64'] as string[]).map(b);
      const ok =
        c['kind'] === 'inclusion'
          ? await verifyInclusion(c['leaf_index'] as number, c['tree_size'] as number, b(c['leaf_hash_b64']), proof, b(c['root_b64']))
          : await verifyConsistency(c['first'] as number, c['second'] as number, b(c['first_root_b64']), b(c['second_root_b64']), proof);
      expect(ok, c['name'] as string).toBe(!c['want_error']);
    }
  });
});

describe('checkpoints (checkpoints.json)', () => {
  const v = load<{ c2sp_example: { vkey: string; note: string }; checkpoint: { vkey: string; note: string; origin: string; tree_size: number; root_base64: string } }>('checkpoints.json');
  it('the C2SP example and the checkpoint verify; a forged or altered note does not', async () => {
    expect(await openNote(v.c2sp_example.note, [await parseVerifierKey(v.c2sp_example.vkey)])).toBe('This is an example message.\n');
    const verifier = await parseVerifierKey(v.checkpoint.vkey);
    const cp = await openCheckpoint(v.checkpoint.note, [verifier], v.checkpoint.origin);
    expect(cp.size).toBe(v.checkpoint.tree_size);
    expect(Buffer.from(cp.rootHash).toString('base64')).toBe(v.checkpoint.root_base64);
    await expect(openCheckpoint(v.checkpoint.note.replace('\n8\n', '\n9\n'), [verifier])).rejects.toThrow(/not signed/);
    await expect(openCheckpoint(v.checkpoint.note, [verifier], 'other/origin')).rejects.toThrow(/not other/);
    await expect(openNote(v.checkpoint.note, [await parseVerifierKey(v.c2sp_example.vkey)])).rejects.toThrow(/not signed/);
  });
});

/** The server's MPP vectors (spec/vectors/mpp-*.json, scripts/mpp-vectors.ts): the library must reproduce them. */
describe('MPP (mpp-envelopes.json, mpp-splits.json)', () => {
  it('envelopes: signing input, signatures, encoding', async () => {
    const v = load<{ cases: Array<{ name: string; request: { method: string; url: string; body: string }; parties: Array<{ party: string; seed_hex: string; kid: string; share: string }>; unsigned: UnsignedEnvelope; jcs: string; signing_input_hex: string; envelope: Envelope; encoded?: string }> }>('mpp-envelopes.json');
    for (const c of v.cases) {
      expect(toHex(envelopeSigningInput(c.unsigned)), c.name).toBe(c.signing_input_hex);
      expect(await sha256Digest(c.request.body)).toBe(c.unsigned.body_digest);
      for (const p of c.parties) expect(await jwkThumbprint(await publicKeyFromSeed(fromHex(p.seed_hex)))).toBe(p.kid);
      const signed = await signEnvelope(c.unsigned, new Map(c.parties.map((p) => [p.party, fromHex(p.seed_hex)])));
      expect(signed.authorizations).toEqual(c.envelope.authorizations);
      for (const [i, a] of signed.authorizations.entries()) {
        const party = c.parties[i];
        expect(await verifyEd25519(Buffer.from(a.sig.slice(8), 'base64url'), envelopeSigningInput(c.unsigned), await publicKeyFromSeed(fromHex(party?.seed_hex ?? '')))).toBe(true);
      }
      const built = await buildEnvelope({
        method: c.request.method,
        url: c.request.url,
        body: c.request.body,
        totalCredits: c.unsigned.total_credits,
        parties: c.parties.map((p) => ({ party: p.party, share: p.share, privateKey: fromHex(p.seed_hex) })),
        now: Date.parse(c.unsigned.issued_at),
        ttlSeconds: (Date.parse(c.unsigned.expires) - Date.parse(c.unsigned.issued_at)) / 1000,
        nonce: c.unsigned.nonce,
        envId: c.unsigned.env_id,
      });
      expect(built.envelope).toEqual(c.envelope);
    }
  });
  it('splits', () => {
    const v = load<{ cases: Array<{ name: string; total: number; shares: string[]; credits: number[] }> }>('mpp-splits.json');
    for (const c of v.cases) expect(splitCredits(c.total, c.shares), c.name).toEqual(c.credits);
  });
});
