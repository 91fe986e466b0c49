/**
 * Writes the test vectors in spec/vectors/ (receipts, JCS, digests, Merkle proofs, checkpoints, API keys).
 * Run `npx tsx scripts/receipt-vectors.ts` after a deliberate wire-format change; the vectors are committed, the
 * server's tests check it reproduces them, and the Python reference checker verifies them independently.
 * Known answers from outside this project are kept as they were published (RFC 8785, RFC 8032, RFC 8037,
 * c2sp.org/signed-note, transparency-dev/merkle's RFC 6962 test tree).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { apiKeyChecksum, API_KEY_PREFIX, TEST_API_KEY_PREFIX } from '../payments/api-keys.js';
import {
  formatCheckpointText,
  formatVerifierKey,
  leafHash,
  receiptLeaf,
  receiptSigningInput,
  signNote,
  type NotaryReceipt,
  type UnsignedReceipt,
} from '../payments/receipts/index.js';
import {
  canonicalJson,
  formatSignature,
  jwkThumbprint,
  publicKeyFromSeed,
  requestDigest,
  responseDigest,
  saltedRequestDigest,
  REQUEST_SALT_MEMBER,
  signBytes,
  toBase64,
  toBase64Url,
  toHex,
  fromHex,
} from '../payments/crypto/index.js';
import { referenceConsistency, referenceMth, referencePath } from '../testkit/merkle-reference.js';

const out = path.resolve(import.meta.dirname, '../spec/vectors');
const write = (name: string, value: unknown) => writeFileSync(path.join(out, name), `${JSON.stringify(value, null, 2)}\n`);
const utf8 = (s: string) => new TextEncoder().encode(s);
const seedFrom = (label: string) => new Uint8Array(createHash('sha256').update(label).digest());

// --- JCS -------------------------------------------------------------------------------------------------------
const rfc8785Inputs: Array<[string, string]> = [
  ['arrays', '[\n  56,\n  {\n    "d": true,\n    "10": null,\n    "1": [ ]\n  }\n]'],
  ['french', '{\n  "peach": "This sorting order",\n  "péché": "is wrong according to French",\n  "pêche": "but canonicalization MUST",\n  "sin":   "ignore locale"\n}'],
  ['structures', '{\n  "1": {"f": {"f": "hi","F": 5} ,"\\n": 56.0},\n  "10": { },\n  "": "empty",\n  "a": { },\n  "111": [ {"e": "yes","E": "no" } ],\n  "A": { }\n}'],
  ['unicode', '{\n  "Unnormalized Unicode":"A\\u030a"\n}'],
  ['values', '{\n  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],\n  "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",\n  "literals": [null, true, false]\n}'],
  ['weird', '{\n  "\\u20ac": "Euro Sign",\n  "\\r": "Carriage Return",\n  "\\u000a": "Newline",\n  "1": "One",\n  "\\u0080": "Control\\u007f",\n  "\\ud83d\\ude02": "Smiley",\n  "\\u00f6": "Latin Small Letter O With Diaeresis",\n  "\\ufb33": "Hebrew Letter Dalet With Dagesh",\n  "</script>": "Browser Challenge"\n}'],
];
const ownInputs: Array<[string, string]> = [
  ['integers', '{"zero":0,"minus_zero":-0,"one":1,"negative":-42,"max_safe":9007199254740991,"min_safe":-9007199254740991,"exp_int":1E2,"big":1e21,"below_big":100000000000000000000}'],
  ['key_order_utf16', '{"b":1,"a":2,"aa":3,"A":4,"_":5,"\\u00e9":6,"\\ud800\\udc00":7,"\\uffff":8,"":9}'],
  ['escaping', '{"s":"tab\\there, quote \\" backslash \\\\ slash / nul \\u0000 bell \\u0007 del \\u007f line sep \\u2028 para \\u2029 bmp \\u00e9 astral \\ud83d\\ude00"}'],
  ['nested', '{"z":[{"b":[],"a":{}},[[],[{}]],null],"y":{"y":{"y":{"y":"deep"}}}}'],
  ['whitespace_only', ' \n\t\r {\n "a" : [ 1 , 2 ] \r\n } '],
  ['response_like', '{"query":"vacuum","depth":1,"results":[{"url":"http://127.0.0.1/a.html","title":"A","snippet":"…","rerank_score":0.7312345678901234},{"url":"http://127.0.0.1/b.html","title":"B","snippet":"","rerank_score":1e-7}],"credits_used":1,"rate_limit":{"limit":10,"remaining":9,"reset_ms":1000}}'],
];
const numbers: Array<[string, string]> = [
  ['0000000000000000', '0'], ['8000000000000000', '0'], ['0000000000000001', '5e-324'], ['8000000000000001', '-5e-324'],
  ['7fefffffffffffff', '1.7976931348623157e+308'], ['ffefffffffffffff', '-1.7976931348623157e+308'],
  ['4340000000000000', '9007199254740992'], ['c340000000000000', '-9007199254740992'], ['4430000000000000', '295147905179352830000'],
  ['44b52d02c7e14af5', '9.999999999999997e+22'], ['44b52d02c7e14af6', '1e+23'], ['44b52d02c7e14af7', '1.0000000000000001e+23'],
  ['444b1ae4d6e2ef4e', '999999999999999700000'], ['444b1ae4d6e2ef4f', '999999999999999900000'], ['444b1ae4d6e2ef50', '1e+21'],
  ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'], ['3eb0c6f7a0b5ed8d', '0.000001'], ['41b3de4355555553', '333333333.3333332'],
  ['41b3de4355555554', '333333333.33333325'], ['41b3de4355555555', '333333333.3333333'], ['41b3de4355555556', '333333333.3333334'],
  ['41b3de4355555557', '333333333.33333343'], ['becbf647612f3696', '-0.0000033333333333333333'], ['43143ff3c1cb0959', '1424953923781206.2'],
];
const jcsCase = (source: string) => ([name, input]: [string, string]) => {
  const expected = canonicalJson(JSON.parse(input));
  return { name, source, input, expected, expected_hex: toHex(utf8(expected)) };
};
write('jcs.json', {
  description: 'RFC 8785 JSON Canonicalization Scheme. Parse `input` as JSON, canonicalize, compare with `expected` (UTF-8 bytes in `expected_hex`). `numbers`: an IEEE 754 double (hex of its bits) and its canonical form.',
  cases: [...rfc8785Inputs.map(jcsCase('RFC 8785 / cyberphone json-canonicalization testdata')), ...ownInputs.map(jcsCase('notary'))],
  numbers: numbers.map(([ieee_hex, expected]) => {
    const value = Buffer.from(ieee_hex, 'hex').readDoubleBE(0);
    const actual = canonicalJson(value);
    if (actual !== expected) throw new Error(`JCS number ${ieee_hex}: RFC says ${expected}, we produce ${actual}`);
    return { ieee_hex, expected, source: 'RFC 8785 Appendix B' };
  }),
  errors: [
    { name: 'nan', ieee_hex: '7fffffffffffffff', why: 'NaN has no JSON form' },
    { name: 'infinity', ieee_hex: '7ff0000000000000', why: 'Infinity has no JSON form' },
  ],
});

// --- Ed25519 keys, receipts -------------------------------------------------------------------------------------
const rfc8032Seed = fromHex('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60');
const rfc8032Signature = toHex(signBytes(new Uint8Array(0), rfc8032Seed));
if (rfc8032Signature !== 'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b') {
  throw new Error('RFC 8032 test 1 does not reproduce');
}
const rfc8037Kid = jwkThumbprint(publicKeyFromSeed(rfc8032Seed));
if (rfc8037Kid !== 'kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k') throw new Error('RFC 8037 A.3 thumbprint does not reproduce');

interface ReceiptVectorInput {
  name: string;
  seed: Uint8Array;
  issuer: string;
  issued_at: string;
  claim: string;
  credits: number;
  request_id: string;
  request_body: string;
  response_body: Record<string, unknown>;
  /** Version 2: the request salt (base64url of 32 bytes) the response carries; absent for a version 1 receipt. */
  request_salt?: string;
}
const receiptVector = (v: ReceiptVectorInput) => {
  const publicKey = publicKeyFromSeed(v.seed);
  const kid = jwkThumbprint(publicKey);
  const requestBytes = utf8(v.request_body);
  const responseBody = v.request_salt === undefined ? v.response_body : { ...v.response_body, [REQUEST_SALT_MEMBER]: v.request_salt };
  const unsigned: UnsignedReceipt = {
    issuer: v.issuer,
    issued_at: v.issued_at,
    claim: v.claim,
    credits: v.credits,
    kid,
    request_id: v.request_id,
    request_digest: v.request_salt === undefined ? requestDigest(requestBytes) : saltedRequestDigest(requestBytes, v.request_salt),
    response_digest: responseDigest(responseBody),
  };
  const signingInput = receiptSigningInput(unsigned);
  const receipt: NotaryReceipt = { ...unsigned, signature: formatSignature(signBytes(signingInput, v.seed)) };
  return {
    name: v.name,
    digest_version: v.request_salt === undefined ? 1 : 2,
    seed_hex: toHex(v.seed),
    public_key_hex: toHex(publicKey),
    jwk: { kty: 'OKP', crv: 'Ed25519', x: toBase64Url(publicKey), kid, alg: 'EdDSA', use: 'sig', nbf: 1763856000 },
    request_body_hex: toHex(requestBytes),
    response_body: responseBody,
    response_body_jcs: canonicalJson((({ notary_receipt: _r, ...rest }) => rest)(responseBody)),
    unsigned_receipt_jcs: canonicalJson(unsigned),
    signed_bytes_hex: toHex(signingInput),
    signature: receipt.signature,
    receipt,
    leaf_hex: toHex(receiptLeaf(receipt)),
    leaf_hash_hex: toHex(leafHash(receiptLeaf(receipt))),
  };
};
const searchBody = {
  query: 'vacuum dead tuples',
  depth: 2,
  results: [
    { url: 'http://127.0.0.1:8000/sql-vacuum.html', title: 'VACUUM', snippet: 'VACUUM reclaims storage occupied by dead tuples…', rerank_score: 0.7312345678901234 },
    { url: 'http://127.0.0.1:8000/routine-vacuuming.html', title: 'Routine Vacuuming', snippet: 'Ünïcödé “quotes” and\ttabs', rerank_score: 1e-7 },
  ],
  credits_used: 2,
  rate_limit: { limit: 10, remaining: 9, reset_ms: 6000 },
};
write('receipts.json', {
  description:
    'Signed receipts (field-notes §5). signed bytes = UTF-8("notary-receipt-v1\\n" + JCS(receipt without signature)); signature = "ed25519:" + base64url(Ed25519(seed, signed bytes)); kid = RFC 7638 thumbprint of the JWK; request_digest (digest_version 2, issued now) = "hmac-sha-256=:" + base64(HMAC-SHA-256(key = base64url-decoded notary_request_salt of the response body, 32 bytes; message = the request body bytes)) + ":"; request_digest (digest_version 1, issued before salts, still valid) = sha-256 of the request body bytes; response_digest = sha-256 of JCS(response body without notary_receipt); log leaf = JCS(receipt with signature), leaf hash = SHA-256(0x00 || leaf). A verifier must refuse the receipt after any change to any field.',
  known_answers: {
    rfc8032_test1: { seed_hex: toHex(rfc8032Seed), public_key_hex: toHex(publicKeyFromSeed(rfc8032Seed)), message_hex: '', signature_hex: rfc8032Signature },
    rfc8037_thumbprint: { x: toBase64Url(publicKeyFromSeed(rfc8032Seed)), kid: rfc8037Kid },
  },
  cases: [
    receiptVector({
      name: 'search, RFC 8032 test key',
      seed: rfc8032Seed,
      issuer: 'https://search.example.org',
      issued_at: '2026-11-23T12:00:00Z',
      claim: 'search_call_consumed',
      credits: 2,
      request_id: 'req_0123456789ABCDEFGHij',
      request_body: '{"query":"vacuum dead tuples","depth":2}',
      response_body: { ...searchBody, facts: searchBody.results },
    }),
    receiptVector({
      name: 'extract, zero credits, body with whitespace and a notary_receipt member that the digest ignores',
      seed: seedFrom('notary receipt vector key 2'),
      issuer: 'http://127.0.0.1:8080',
      issued_at: '2026-01-31T23:59:59Z',
      claim: 'extract_call_consumed',
      credits: 0,
      request_id: 'req_zzzzzzzzzzzzzzzzzzzz',
      request_body: '{ "url" : "https://example.org/a",\n  "mode": "excerpt" }',
      response_body: { url: 'https://example.org/a', mode: 'excerpt', content: 'Ça va — ok', word_count: 3, credits_used: 0, notary_receipt: { ignored: true } },
    }),
    receiptVector({
      name: 'search, version 2 request digest (salted), RFC 8032 test key',
      seed: rfc8032Seed,
      issuer: 'https://search.example.org',
      issued_at: '2026-11-26T12:00:00Z',
      claim: 'search_call_consumed',
      credits: 2,
      request_id: 'req_0123456789ABCDEFGHik',
      request_body: '{"query":"vacuum dead tuples","depth":2}',
      request_salt: toBase64Url(seedFrom('notary request salt vector 1')),
      response_body: { ...searchBody, facts: searchBody.results },
    }),
    receiptVector({
      name: 'extract, version 2 request digest (salted), zero credits, body with whitespace',
      seed: seedFrom('notary receipt vector key 2'),
      issuer: 'http://127.0.0.1:8080',
      issued_at: '2026-11-26T23:59:59Z',
      claim: 'extract_call_consumed',
      credits: 0,
      request_id: 'req_zzzzzzzzzzzzzzzzzzzy',
      request_body: '{ "url" : "https://example.org/a",\n  "mode": "excerpt" }',
      request_salt: toBase64Url(seedFrom('notary request salt vector 2')),
      response_body: { url: 'https://example.org/a', mode: 'excerpt', content: 'Ça va — ok', word_count: 3, credits_used: 0, notary_receipt: { ignored: true } },
    }),
  ],
});

write('digests.json', {
  description:
    'request_digest version 2 (entries with `salt`): "hmac-sha-256=:" + base64(HMAC-SHA-256(key = base64url-decoded salt, 32 bytes; message = the exact body bytes)) + ":". Version 1 (no `salt`, issued before salts): RFC 9530 sha-256 of the exact body bytes. response_digest: sha-256 of the JCS of the parsed body with notary_receipt removed (notary_request_salt stays in).',
  request: [
    { body_hex: '', digest: requestDigest(new Uint8Array(0)) },
    { body_hex: toHex(utf8('{"query":"x","depth":1}')), digest: requestDigest(utf8('{"query":"x","depth":1}')) },
    { body_hex: toHex(utf8('{"depth":1,"query":"x"}')), digest: requestDigest(utf8('{"depth":1,"query":"x"}')), note: 'the same JSON in another member order is other bytes: another digest' },
    ...[
      { body: '', salt: toBase64Url(seedFrom('notary digest salt 1')) },
      { body: '{"query":"x","depth":1}', salt: toBase64Url(seedFrom('notary digest salt 1')) },
      { body: '{"query":"x","depth":1}', salt: toBase64Url(seedFrom('notary digest salt 2')), note: 'the same body under another salt: another digest' },
    ].map((r) => ({ body_hex: toHex(utf8(r.body)), salt: r.salt, digest: saltedRequestDigest(utf8(r.body), r.salt), ...(r.note ? { note: r.note } : {}) })),
  ],
  response: [
    { body: searchBody, jcs: canonicalJson(searchBody), digest: responseDigest(searchBody) },
    { body: { ...searchBody, notary_receipt: { signature: 'ed25519:x' } }, jcs: canonicalJson(searchBody), digest: responseDigest(searchBody), note: 'notary_receipt is not part of the digest' },
  ],
});

// --- Merkle -----------------------------------------------------------------------------------------------------
const ctLeaves = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'].map(fromHex);
const ctRoots = [
  'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];
ctRoots.forEach((root, size) => {
  if (toHex(referenceMth(ctLeaves.slice(0, size))) !== root) throw new Error(`reference MTH of size ${size} differs from the published root`);
});
const treeVectors = (leaves: Uint8Array[], sizes: number[]) => ({
  leaves_hex: leaves.map(toHex),
  leaf_hashes_hex: leaves.map((l) => toHex(leafHash(l))),
  roots: sizes.map((size) => ({ tree_size: size, root_hex: toHex(referenceMth(leaves.slice(0, size))) })),
  inclusion: sizes.flatMap((size) =>
    Array.from({ length: size }, (_, index) => ({ leaf_index: index, tree_size: size, proof_hex: referencePath(index, leaves.slice(0, size)).map(toHex) })),
  ),
  consistency: sizes.flatMap((second) =>
    sizes.filter((first) => first >= 1 && first <= second).map((first) => ({ first, second, proof_hex: referenceConsistency(first, leaves.slice(0, second)).map(toHex) })),
  ),
});
const bigLeaves = Array.from({ length: 70 }, (_, i) => utf8(`notary leaf ${i}`));
const big = treeVectors(bigLeaves, [1, 2, 3, 31, 32, 33, 63, 64, 70]);
// Imported once from transparency-dev/merkle's testdata and kept as committed (not regenerated).
const merkleFile = path.join(out, 'merkle.json');
const transparencyDev: unknown = existsSync(merkleFile) ? (JSON.parse(readFileSync(merkleFile, 'utf8')) as { transparency_dev?: unknown }).transparency_dev : undefined;
write('merkle.json', {
  description:
    'RFC 6962 / RFC 9162 §2.1 Merkle trees: leaf hash SHA-256(0x00 || leaf), node hash SHA-256(0x01 || left || right), split at the largest power of two below n. Proofs are listed leaf-upward (inclusion) and in RFC order (consistency). `ct_test_tree` is the test tree of transparency-dev/merkle (Apache-2.0), roots as published there; `wide_tree` samples a larger tree (inclusion proofs only for the listed sizes, consistency between every pair of them).',
  ct_test_tree: { ...treeVectors(ctLeaves, [1, 2, 3, 4, 5, 6, 7, 8]), published_roots_hex: ctRoots },
  wide_tree: { ...big, inclusion: big.inclusion.filter((p) => p.tree_size !== 70 || p.leaf_index % 7 === 0 || p.leaf_index >= 64) },
  transparency_dev: transparencyDev,
});

// --- Checkpoints --------------------------------------------------------------------------------------------------
const logSeed = seedFrom('notary checkpoint vector key');
const logPublic = publicKeyFromSeed(logSeed);
const origin = 'search.example.org/receipt-log';
const checkpointText = formatCheckpointText({ origin, size: 8, rootHash: fromHex(ctRoots[8] as string) });
const checkpointNote = signNote(checkpointText, origin, logSeed, logPublic);
write('checkpoints.json', {
  description:
    'C2SP signed notes (Ed25519, key id = SHA-256(name || 0x0A || 0x01 || public key)[:4]) carrying C2SP tlog-checkpoints (origin, tree size, base64 root). The signature line is U+2014, space, key name, space, base64(key id || signature), over the note text up to and including its last newline before the blank line.',
  c2sp_example: {
    source: 'c2sp.org/signed-note',
    vkey: 'example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k',
    note: 'This is an example message.\n\n\u2014 example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n',
  },
  checkpoint: {
    seed_hex: toHex(logSeed),
    public_key_hex: toHex(logPublic),
    jwk_x: toBase64Url(logPublic),
    origin,
    vkey: formatVerifierKey(origin, logPublic),
    tree_size: 8,
    root_base64: toBase64(fromHex(ctRoots[8] as string)),
    text: checkpointText,
    note: checkpointNote,
  },
});

// --- API keys -----------------------------------------------------------------------------------------------------
const secrets = ['00000000000000000000000000000000', 'zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz', 'AbCdEfGhIjKlMnOpQrStUvWxYz012345', '7Hq2Lw9XkP3mZr8VtN1bC6yD4sF0gJ5a'];
const valid = [
  ...secrets.map((secret) => ({ secret, checksum: apiKeyChecksum(secret), environment: 'live', key: `${API_KEY_PREFIX}${secret}${apiKeyChecksum(secret)}` })),
  // Test keys: the same secret and checksum scheme under their own prefix (never charged).
  ...secrets.slice(0, 2).map((secret) => ({ secret, checksum: apiKeyChecksum(secret), environment: 'test', key: `${TEST_API_KEY_PREFIX}${secret}${apiKeyChecksum(secret)}` })),
];
const first = valid[0] as { key: string; checksum: string; secret: string };
write('api-keys.json', {
  description:
    'API keys (field-notes §5): "sk_live_" (live) or "sk_test_" (test: never charged) + 32 base62 characters (the secret) + the CRC32 (IEEE, as zlib) of the secret\'s ASCII bytes in base62 (0-9A-Za-z), left-padded with "0" to 6 characters. The prefix tells live from test; the same secret under the other prefix is another key. Reject a bad checksum before any lookup. Only SHA-256(key) in hex is stored.',
  valid: valid.map((v) => ({ ...v, crc32: crcOf(v.secret), sha256_hex: createHash('sha256').update(v.key).digest('hex') })),
  invalid: [
    { key: `${first.key.slice(0, -1)}${first.key.endsWith('0') ? '1' : '0'}`, why: 'checksum does not match' },
    { key: `sk_prod_${first.secret}${first.checksum}`, why: 'wrong prefix' },
    { key: `${TEST_API_KEY_PREFIX}${first.secret}${first.checksum.startsWith('0') ? '1' : '0'}${first.checksum.slice(1)}`, why: 'test key whose checksum does not match' },
    { key: first.key.slice(0, -1), why: 'too short' },
    { key: `${API_KEY_PREFIX}${first.secret.slice(0, -1)}-${first.checksum}`, why: 'character outside base62' },
  ],
});

function crcOf(secret: string): number {
  let crc = 0xffffffff;
  for (const byte of utf8(secret)) {
    crc ^= byte;
    for (let i = 0; i < 8; i++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
  }
  return (crc ^ 0xffffffff) >>> 0;
}

process.stdout.write(`wrote vectors to ${out}\n`);
