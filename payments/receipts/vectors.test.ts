import { readFileSync } from 'node:fs';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { NotaryError } from '../../core/errors.js';
import { apiKeyChecksum, hashApiKey, parseApiKey } from '../api-keys.js';
import {
  consistencyProofRanges,
  formatCheckpointText,
  formatVerifierKey,
  Frontier,
  inclusionProofRanges,
  leafHash,
  nodeKey,
  openCheckpoint,
  openNote,
  parseVerifierKey,
  proofHashes,
  receiptLeaf,
  receiptSigningInput,
  rootHash,
  signNote,
  verifyConsistency,
  verifyInclusion,
  verifyReceipt,
  type NodeId,
  type NotaryReceipt,
} from './index.js';
import {
  canonicalJson,
  fromBase64,
  fromHex,
  jwkThumbprint,
  parseJwks,
  publicKeyFromSeed,
  requestDigest,
  requestDigestVersion,
  REQUEST_SALT_MEMBER,
  saltedRequestDigest,
  responseDigest,
  signBytes,
  toHex,
  verifyBytes,
} from '../crypto/index.js';
import { mutateField, RECEIPT_FIELDS } from '../../testkit/receipt-mutations.js';

const vectorsDir = path.resolve(import.meta.dirname, '../../spec/vectors');
const load = <T>(name: string): T => JSON.parse(readFileSync(path.join(vectorsDir, name), 'utf8')) as T;

interface JcsVectors {
  cases: Array<{ name: string; input: string; expected: string; expected_hex: string }>;
  numbers: Array<{ ieee_hex: string; expected: string }>;
  errors: Array<{ ieee_hex: string }>;
}
interface Jwk {
  kty: string;
  crv: string;
  x: string;
  kid: string;
  nbf: number;
  exp?: number;
}
type Body = Record<string, unknown>;
interface ReceiptCase {
  name: string;
  digest_version: 1 | 2;
  seed_hex: string;
  public_key_hex: string;
  jwk: Jwk;
  request_body_hex: string;
  response_body: Body;
  response_body_jcs: string;
  unsigned_receipt_jcs: string;
  signed_bytes_hex: string;
  signature: string;
  receipt: NotaryReceipt;
  leaf_hex: string;
  leaf_hash_hex: string;
}
interface ReceiptVectors {
  known_answers: { rfc8032_test1: { seed_hex: string; public_key_hex: string; signature_hex: string }; rfc8037_thumbprint: { kid: string } };
  cases: ReceiptCase[];
}
interface DigestVectors {
  request: Array<{ body_hex: string; digest: string; salt?: string }>;
  response: Array<{ body: Body; jcs: string; digest: string }>;
}
interface TreeVectors {
  leaves_hex: string[];
  leaf_hashes_hex: string[];
  roots: Array<{ tree_size: number; root_hex: string }>;
  inclusion: Array<{ leaf_index: number; tree_size: number; proof_hex: string[] }>;
  consistency: Array<{ first: number; second: number; proof_hex: string[] }>;
  published_roots_hex?: string[];
}
interface MerkleVectors {
  ct_test_tree: TreeVectors;
  wide_tree: TreeVectors;
  transparency_dev: {
    cases: Array<{
      kind: 'inclusion' | 'consistency';
      name: string;
      leaf_index: number;
      tree_size: number;
      leaf_hash_b64: string;
      root_b64: string;
      first: number;
      second: number;
      first_root_b64: string;
      second_root_b64: string;
      proof_b64: string[];
      want_error: boolean;
    }>;
  };
}
interface CheckpointVectors {
  c2sp_example: { vkey: string; note: string };
  checkpoint: { seed_hex: string; origin: string; vkey: string; tree_size: number; root_base64: string; text: string; note: string };
}
interface ApiKeyVectors {
  valid: Array<{ secret: string; checksum: string; key: string; crc32: number; sha256_hex: string; environment: string }>;
  invalid: Array<{ key: string; why: string }>;
}
const utf8 = (s: string) => new TextEncoder().encode(s);

describe('JCS vectors (spec/vectors/jcs.json)', () => {
  const jcs = load<JcsVectors>('jcs.json');
  it.each(jcs.cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const out = canonicalJson(JSON.parse(c.input));
    expect(out).toBe(c.expected);
    expect(toHex(utf8(out))).toBe(c.expected_hex);
  });
  it('numbers of RFC 8785 Appendix B', () => {
    for (const n of jcs.numbers) expect(canonicalJson(Buffer.from(n.ieee_hex, 'hex').readDoubleBE(0)), n.ieee_hex).toBe(n.expected);
  });
  it('refuses values without a JSON form', () => {
    for (const e of jcs.errors) expect(() => canonicalJson(Buffer.from(e.ieee_hex, 'hex').readDoubleBE(0))).toThrow(/canonicalized/);
    expect(() => canonicalJson({ s: '\ud800' })).toThrow(/canonicalized/);
    expect(() => canonicalJson(undefined)).toThrow(/no JSON form/);
  });
});

describe('receipt vectors (spec/vectors/receipts.json)', () => {
  const receipts = load<ReceiptVectors>('receipts.json');
  it('known answers: RFC 8032 test 1 and the RFC 8037 thumbprint', () => {
    const ka = receipts.known_answers.rfc8032_test1;
    const seed = fromHex(ka.seed_hex);
    expect(toHex(publicKeyFromSeed(seed))).toBe(ka.public_key_hex);
    expect(toHex(signBytes(new Uint8Array(0), seed))).toBe(ka.signature_hex);
    expect(verifyBytes(fromHex(ka.signature_hex), new Uint8Array(0), fromHex(ka.public_key_hex))).toBe(true);
    expect(jwkThumbprint(fromHex(ka.public_key_hex))).toBe(receipts.known_answers.rfc8037_thumbprint.kid);
  });

  describe.each(receipts.cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const receipt = c.receipt;
    const keys = parseJwks({ keys: [c.jwk] });
    const requestBody = fromHex(c.request_body_hex);

    it('reproduces kid, digests, signed bytes, signature and leaf', () => {
      const seed = fromHex(c.seed_hex);
      expect(toHex(publicKeyFromSeed(seed))).toBe(c.public_key_hex);
      expect(jwkThumbprint(fromHex(c.public_key_hex))).toBe(receipt.kid);
      const salt = c.response_body[REQUEST_SALT_MEMBER];
      if (c.digest_version === 1) expect(requestDigest(requestBody)).toBe(receipt.request_digest);
      else expect(saltedRequestDigest(requestBody, String(salt))).toBe(receipt.request_digest);
      expect(requestDigestVersion(receipt.request_digest)).toBe(c.digest_version);
      expect(responseDigest(c.response_body)).toBe(receipt.response_digest);
      const { notary_receipt: _ignored, ...bodyWithout } = c.response_body;
      expect(canonicalJson(bodyWithout)).toBe(c.response_body_jcs);
      const { signature: _sig, ...unsigned } = receipt;
      expect(canonicalJson(unsigned)).toBe(c.unsigned_receipt_jcs);
      expect(toHex(receiptSigningInput(receipt))).toBe(c.signed_bytes_hex);
      expect(Buffer.from(fromHex(c.signed_bytes_hex)).toString('utf8')).toBe(`notary-receipt-v1\n${c.unsigned_receipt_jcs}`);
      expect(`ed25519:${Buffer.from(signBytes(fromHex(c.signed_bytes_hex), seed)).toString('base64url')}`).toBe(c.signature);
      expect(toHex(receiptLeaf(receipt))).toBe(c.leaf_hex);
      expect(toHex(leafHash(receiptLeaf(receipt)))).toBe(c.leaf_hash_hex);
    });

    it('verifies with the JWKS, the saved body and the request bytes', () => {
      const result = verifyReceipt({ receipt, keys, responseBody: c.response_body, requestBody });
      expect(result.checks.filter((x) => x.ok !== true)).toEqual([]);
      expect(result.ok).toBe(true);
    });

    it.each(RECEIPT_FIELDS.map((f) => [f]))('a changed byte of %s is refused', (field) => {
      const changed = mutateField(receipt, field);
      expect(changed[field]).not.toEqual(receipt[field]);
      const result = verifyReceipt({ receipt: changed, keys, responseBody: c.response_body, requestBody });
      expect(result.ok).toBe(false);
    });

    it('a changed byte of the saved response body or request is refused', () => {
      const body = structuredClone(c.response_body);
      body['credits_used'] = Number(body['credits_used']) + 1;
      expect(verifyReceipt({ receipt, keys, responseBody: body }).checks.find((x) => x.name === 'response_digest')?.ok).toBe(false);
      const request = new Uint8Array(requestBody);
      request[0] = (request[0] ?? 0) ^ 1;
      const wrong = verifyReceipt({ receipt, keys, responseBody: c.response_body, requestBody: request });
      expect(wrong.checks.find((x) => x.name === 'request_digest')?.ok).toBe(false);
    });

    // Only version-2 cases carry a salt; a version-1 case declares no such test (none skipped).
    if (c.digest_version === 2) it('version 2: the log leaf cannot confirm a guessed request; a changed or missing salt is refused', () => {
      const salt = String(c.response_body[REQUEST_SALT_MEMBER]);
      const leaf = Buffer.from(receiptLeaf(receipt)).toString('utf8');
      // What a log reader can compute from a guessed body: the version 1 digest. It is not in the leaf, nor the salt.
      expect(leaf).not.toContain(requestDigest(requestBody).slice('sha-256=:'.length, -1));
      expect(leaf).not.toContain(salt);
      const otherSalt = `${salt.slice(0, -2)}${salt.at(-2) === 'A' ? 'B' : 'A'}${salt.at(-1)}`;
      const changed = verifyReceipt({ receipt, keys, responseBody: { ...c.response_body }, requestBody, requestSalt: otherSalt });
      expect(changed.checks.find((x) => x.name === 'request_digest')?.ok).toBe(false);
      const { [REQUEST_SALT_MEMBER]: _salt, ...withoutSalt } = c.response_body;
      const missing = verifyReceipt({ receipt, keys, responseBody: withoutSalt, requestBody });
      expect(missing.checks.find((x) => x.name === 'request_digest')).toMatchObject({ ok: false, detail: expect.stringContaining('notary_request_salt') });
    });

    it('an unknown kid, or a key outside its window, is refused', () => {
      expect(verifyReceipt({ receipt, keys: [] }).checks.find((x) => x.name === 'kid')?.ok).toBe(false);
      const issued = Date.parse(receipt.issued_at) / 1000;
      const expired = parseJwks({ keys: [{ ...c.jwk, nbf: issued - 100, exp: issued - 1 }] });
      expect(verifyReceipt({ receipt, keys: expired }).checks.find((x) => x.name === 'key_validity')?.ok).toBe(false);
      const future = parseJwks({ keys: [{ ...c.jwk, nbf: issued + 1 }] });
      expect(verifyReceipt({ receipt, keys: future }).ok).toBe(false);
    });
  });

  it('a JWKS whose kid is not the thumbprint of its key is refused', () => {
    const [first, second] = receipts.cases;
    expect(() => parseJwks({ keys: [{ ...first?.jwk, kid: second?.jwk.kid }] })).toThrow(/thumbprint/);
  });
});

describe('digest vectors (spec/vectors/digests.json)', () => {
  const digests = load<DigestVectors>('digests.json');
  it('request and response digests', () => {
    for (const r of digests.request) expect(r.salt === undefined ? requestDigest(fromHex(r.body_hex)) : saltedRequestDigest(fromHex(r.body_hex), r.salt)).toBe(r.digest);
    expect(digests.request.filter((r) => r.salt !== undefined).length).toBeGreaterThan(0);
    for (const r of digests.response) {
      expect(responseDigest(r.body)).toBe(r.digest);
      const { notary_receipt: _r, ...rest } = r.body;
      expect(canonicalJson(rest)).toBe(r.jcs);
    }
  });
});

/** Builds the stored node map of a tree by appending through Frontier, as the log does. */
function storedNodes(leafHashes: Uint8Array[]): { nodes: Map<string, Uint8Array>; roots: Uint8Array[] } {
  const nodes = new Map<string, Uint8Array>();
  const roots: Uint8Array[] = [Frontier.empty().root()];
  let frontier = Frontier.empty();
  for (const hash of leafHashes) {
    const plan = frontier.planAppend(hash);
    for (const n of plan.nodes) nodes.set(nodeKey(n), n.hash);
    frontier = plan.next;
    roots.push(frontier.root());
  }
  return { nodes, roots };
}

function flipBit(hash: Uint8Array): Uint8Array {
  const copy = new Uint8Array(hash);
  copy[copy.length - 1] = (copy[copy.length - 1] ?? 0) ^ 1;
  return copy;
}

describe('Merkle vectors (spec/vectors/merkle.json)', () => {
  const merkle = load<MerkleVectors>('merkle.json');
  describe.each([
    ['ct_test_tree', merkle.ct_test_tree],
    ['wide_tree', merkle.wide_tree],
  ])('%s', (_name, tree) => {
    const leafHashes = tree.leaves_hex.map((h) => leafHash(fromHex(h)));
    const { nodes, roots } = storedNodes(leafHashes);
    const lookup = (node: NodeId) => {
      const hash = nodes.get(nodeKey(node));
      if (!hash) throw new Error(`missing ${nodeKey(node)}`);
      return hash;
    };

    it('leaf hashes and roots, from the frontier and from stored nodes', () => {
      expect(leafHashes.map(toHex)).toEqual(tree.leaf_hashes_hex);
      for (const r of tree.roots) {
        expect(toHex(roots[r.tree_size] as Uint8Array), `frontier root ${r.tree_size}`).toBe(r.root_hex);
        expect(toHex(rootHash(r.tree_size, lookup)), `stored root ${r.tree_size}`).toBe(r.root_hex);
      }
      if (tree.published_roots_hex) tree.published_roots_hex.forEach((root, size) => expect(toHex(roots[size] as Uint8Array)).toBe(root));
    });

    it('inclusion proofs: generated equal, verify, and any change is refused', () => {
      for (const p of tree.inclusion) {
        const proof = proofHashes(inclusionProofRanges(p.leaf_index, p.tree_size), lookup);
        expect(proof.map(toHex)).toEqual(p.proof_hex);
        const root = roots[p.tree_size] as Uint8Array;
        const leaf = leafHashes[p.leaf_index] as Uint8Array;
        expect(verifyInclusion(p.leaf_index, p.tree_size, leaf, proof, root)).toBe(true);
        expect(verifyInclusion(p.leaf_index, p.tree_size, flipBit(leaf), proof, root)).toBe(false);
        expect(verifyInclusion(p.leaf_index, p.tree_size, leaf, proof, flipBit(root))).toBe(false);
        proof.forEach((_, i) => expect(verifyInclusion(p.leaf_index, p.tree_size, leaf, proof.map((h, j) => (i === j ? flipBit(h) : h)), root)).toBe(false));
        if (p.tree_size > 1) {
          expect(verifyInclusion(p.leaf_index ^ 1, p.tree_size, leaf, proof, root)).toBe(false);
          expect(verifyInclusion(p.leaf_index, p.tree_size, leaf, proof.slice(0, -1), root)).toBe(false);
        }
        expect(verifyInclusion(p.leaf_index, p.tree_size, leaf, [...proof, leaf], root)).toBe(false);
      }
    });

    it('consistency proofs: generated equal, verify, and any change is refused', () => {
      for (const p of tree.consistency) {
        const proof = proofHashes(consistencyProofRanges(p.first, p.second), lookup);
        expect(proof.map(toHex)).toEqual(p.proof_hex);
        const first = roots[p.first] as Uint8Array;
        const second = roots[p.second] as Uint8Array;
        expect(verifyConsistency(p.first, p.second, first, second, proof)).toBe(true);
        expect(verifyConsistency(p.first, p.second, flipBit(first), second, proof)).toBe(false);
        expect(verifyConsistency(p.first, p.second, first, flipBit(second), proof)).toBe(false);
        proof.forEach((_, i) => expect(verifyConsistency(p.first, p.second, first, second, proof.map((h, j) => (i === j ? flipBit(h) : h)))).toBe(false));
      }
    });
  });

  it('transparency-dev/merkle verification cases', () => {
    const b64 = (s: string) => new Uint8Array(Buffer.from(s, 'base64'));
    for (const c of merkle.transparency_dev.cases) {
      const ok =
        c.kind === 'inclusion'
          ? verifyInclusion(c.leaf_index, c.tree_size, b64(c.leaf_hash_b64), c.proof_b64.map(b64), b64(c.root_b64))
          : verifyConsistency(c.first, c.second, b64(c.first_root_b64), b64(c.second_root_b64), c.proof_b64.map(b64));
      expect(ok, c.name).toBe(!c.want_error);
    }
  });
});

describe('checkpoint vectors (spec/vectors/checkpoints.json)', () => {
  const v = load<CheckpointVectors>('checkpoints.json');
  it('the C2SP signed-note example verifies with its verifier key', () => {
    const verifier = parseVerifierKey(v.c2sp_example.vkey);
    expect(formatVerifierKey(verifier.name, verifier.publicKey)).toBe(v.c2sp_example.vkey);
    expect(openNote(v.c2sp_example.note, [verifier]).text).toBe('This is an example message.\n');
  });
  it('reproduces and opens the checkpoint; forged, altered or foreign notes are refused', () => {
    const cp = v.checkpoint;
    const seed = fromHex(cp.seed_hex);
    const publicKey = publicKeyFromSeed(seed);
    expect(formatVerifierKey(cp.origin, publicKey)).toBe(cp.vkey);
    const text = formatCheckpointText({ origin: cp.origin, size: cp.tree_size, rootHash: fromBase64(cp.root_base64) as Uint8Array });
    expect(text).toBe(cp.text);
    expect(signNote(text, cp.origin, seed, publicKey)).toBe(cp.note);
    const verifier = parseVerifierKey(cp.vkey);
    const opened = openCheckpoint(cp.note, [verifier], cp.origin);
    expect(opened.size).toBe(cp.tree_size);
    const sigStart = cp.note.lastIndexOf(' ') + 1;
    const sig = Buffer.from(cp.note.slice(sigStart, -1), 'base64');
    sig[10] = (sig[10] ?? 0) ^ 1;
    const forged = cp.note.slice(0, sigStart) + sig.toString('base64') + '\n';
    expect(() => openCheckpoint(forged, [verifier])).toThrow(/does not verify/);
    expect(() => openCheckpoint(cp.note.replace('\n8\n', '\n9\n'), [verifier])).toThrow(/does not verify/);
    const stranger = parseVerifierKey(formatVerifierKey(cp.origin, publicKeyFromSeed(fromHex('11'.repeat(32)))));
    expect(() => openCheckpoint(cp.note, [stranger])).toThrow(/no signature by a trusted key/);
    expect(() => openCheckpoint(cp.note, [verifier], 'other.example/log')).toThrow(/origin/);
  });
});

describe('API key vectors (spec/vectors/api-keys.json)', () => {
  const v = load<ApiKeyVectors>('api-keys.json');
  it('valid keys pass, with the checksum and hash the vectors give', () => {
    for (const k of v.valid) {
      expect(crc32(k.secret)).toBe(k.crc32);
      expect(apiKeyChecksum(k.secret)).toBe(k.checksum);
      expect(parseApiKey(k.key).hash).toBe(k.sha256_hex);
      expect(parseApiKey(k.key).environment).toBe(k.environment);
      expect(hashApiKey(k.key)).toBe(k.sha256_hex);
    }
  });
  it('invalid keys fail before any lookup', () => {
    for (const k of v.invalid) {
      expect(() => parseApiKey(k.key), k.why).toThrow(NotaryError);
    }
  });
});
