/**
 * Writes the MPP test vectors in spec/vectors/ (mpp-envelopes.json, mpp-splits.json). Run
 * `npx tsx scripts/mpp-vectors.ts` after a deliberate wire-format change; the vectors are committed, the server's tests
 * check it reproduces and accepts them (payments/modes/mpp/vectors.test.ts), and client libraries test against them.
 * The split answers are written here by hand (each with its reasoning) and checked against the implementation, so a
 * change of the rule cannot silently rewrite them.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  encodeEnvelope,
  envelopeSigningInput,
  equalShares,
  kidOfSeed,
  parseShare,
  signEnvelope,
  splitCredits,
  type Envelope,
  type UnsignedEnvelope,
} from '../payments/modes/mpp/index.js';
import { formatSha256Digest, sha256 } from '../payments/crypto/digest.js';
import { publicKeyFromSeed } from '../payments/crypto/ed25519.js';
import { toBase64Url, toHex } from '../payments/crypto/encoding.js';
import { canonicalJson } from '../payments/crypto/jcs.js';
import { formatIssuedAt } from '../payments/receipts/receipt.js';

const out = path.resolve(import.meta.dirname, '../spec/vectors');
const write = (name: string, value: unknown) => writeFileSync(path.join(out, name), `${JSON.stringify(value, null, 2)}\n`);
const utf8 = (s: string) => new TextEncoder().encode(s);
const seedFrom = (label: string) => new Uint8Array(createHash('sha256').update(`notary mpp vector key ${label}`).digest());

// --- Splits ------------------------------------------------------------------------------------------------------
const splits: Array<{ name: string; total: number; shares: string[]; credits: number[]; why: string }> = [
  { name: '1/3-1/3-1/3 of 1 credit, remainder last', total: 1, shares: ['0.333333', '0.333333', '0.333334'], credits: [0, 0, 1], why: 'floors 0,0,0; remainders .333333,.333333,.333334: the third is largest' },
  { name: '1/3-1/3-1/3 of 1 credit, remainder first', total: 1, shares: ['0.333334', '0.333333', '0.333333'], credits: [1, 0, 0], why: 'the first remainder (.333334) is largest' },
  { name: '1/3-1/3-1/3 of 2 credits', total: 2, shares: ['0.333334', '0.333333', '0.333333'], credits: [1, 1, 0], why: 'remainders .666668,.666666,.666666: the first, then the tie goes to the second (envelope order)' },
  { name: '1/3-1/3-1/3 of 3 credits', total: 3, shares: ['0.333333', '0.333333', '0.333334'], credits: [1, 1, 1], why: 'floors 0,0,1 (exact .999999,.999999,1.000002); two leftovers to the two .999999 remainders' },
  { name: '1/3-1/3-1/3 of 100 credits', total: 100, shares: ['0.333333', '0.333333', '0.333334'], credits: [33, 33, 34], why: 'exact 33.3333,33.3333,33.3334: floors 33,33,33, one leftover to the largest remainder' },
  { name: '7 parties, 10 credits', total: 10, shares: equalShares(7), credits: [2, 2, 2, 1, 1, 1, 1], why: 'exact 1.42858 then 1.42857 x6: floors 1 each, 3 leftovers to the first (largest) then the next two in order' },
  { name: '7 parties, 4 credits', total: 4, shares: equalShares(7), credits: [1, 1, 1, 1, 0, 0, 0], why: 'exact .571432 then .571428 x6: 4 leftovers to the first four' },
  {
    name: '7 parties, uneven, 50 credits',
    total: 50,
    shares: ['0.4', '0.2', '0.15', '0.1', '0.08', '0.05', '0.02'],
    credits: [20, 10, 8, 5, 4, 2, 1],
    why: 'exact 20,10,7.5,5,4,2.5,1: floors sum 48; leftovers to the .5 remainders of the 3rd and 6th',
  },
  { name: 'share of 0.000001 of 1 credit', total: 1, shares: ['0.000001', '0.999999'], credits: [0, 1], why: 'remainders .000001 and .999999' },
  { name: 'share of 0.000001 of 1,000,000 credits', total: 1_000_000, shares: ['0.000001', '0.999999'], credits: [1, 999_999], why: 'exact, no leftover' },
  { name: 'share of 0.000001 of 3 credits', total: 3, shares: ['0.000001', '0.999999'], credits: [0, 3], why: 'exact .000003 and 2.999997: the leftover goes to the second' },
  { name: 'two shares of 0.000001 of 1 credit', total: 1, shares: ['0.000001', '0.000001', '0.999998'], credits: [0, 0, 1], why: 'the largest remainder wins over the tiny ones' },
  { name: '1 credit among 3, 0.5/0.25/0.25', total: 1, shares: ['0.5', '0.25', '0.25'], credits: [1, 0, 0], why: 'remainders .5,.25,.25' },
  { name: '1 credit among 3, 0.2/0.3/0.5', total: 1, shares: ['0.2', '0.3', '0.5'], credits: [0, 0, 1], why: 'remainders .2,.3,.5' },
  { name: '1 credit among 3, 0.4/0.4/0.2', total: 1, shares: ['0.4', '0.4', '0.2'], credits: [1, 0, 0], why: 'tie of .4 and .4: the one listed first' },
  { name: 'tie of two halves, 1 credit', total: 1, shares: ['0.5', '0.5'], credits: [1, 0], why: 'tie: envelope order' },
  { name: 'tie of two halves, listed the other way', total: 1, shares: ['0.5', '0.5'], credits: [1, 0], why: 'the first listed wins whoever it is: receipts follow the envelope order' },
  { name: 'ties of four quarters, 2 credits', total: 2, shares: ['0.25', '0.25', '0.25', '0.25'], credits: [1, 1, 0, 0], why: 'four remainders of .5: the first two' },
  { name: 'ties of four quarters, 3 credits', total: 3, shares: ['0.25', '0.25', '0.25', '0.25'], credits: [1, 1, 1, 0], why: 'four remainders of .75: the first three' },
  { name: 'tie around a larger share', total: 3, shares: ['0.25', '0.5', '0.25'], credits: [1, 1, 1], why: 'exact .75,1.5,.75: floors 0,1,0; remainders .75,.5,.75: the two .75 ties' },
  { name: 'tie after a larger remainder', total: 1, shares: ['0.3', '0.35', '0.35'], credits: [0, 1, 0], why: 'remainders .3,.35,.35: the first .35' },
  { name: 'zero credits', total: 0, shares: ['0.5', '0.5'], credits: [0, 0], why: 'nothing to split' },
  { name: 'one party', total: 4, shares: ['1'], credits: [4], why: 'the whole' },
  { name: 'a zero share', total: 5, shares: ['0', '1'], credits: [0, 5], why: 'a party may sign for a zero share' },
  { name: 'trailing zeros', total: 3, shares: ['0.500000', '0.50'], credits: [2, 1], why: 'shares are compared by value: exact 1.5,1.5, tie to the first' },
  {
    name: 'largest safe integer among 3',
    total: Number.MAX_SAFE_INTEGER,
    shares: ['0.333333', '0.333333', '0.333334'],
    credits: [3002396749180579, 3002396749180579, 3002405756379833],
    why: 'exact integer arithmetic: 9007199254740991 x 0.333333 = 3002396749180578.753003 (twice), x 0.333334 = 3002405756379833.493994; two leftovers to the two .753003 remainders',
  },
];
for (const s of splits) {
  const got = splitCredits(s.total, s.shares.map((x) => parseShare(x) ?? -1n));
  if (JSON.stringify(got) !== JSON.stringify(s.credits)) throw new Error(`split "${s.name}": the implementation gives ${JSON.stringify(got)}, the vector says ${JSON.stringify(s.credits)}`);
}
write('mpp-splits.json', {
  description:
    'MPP credit splits (field-notes §5): shares are decimal strings of at most 6 decimals, parsed exactly (never floats), summing to exactly 1. Each party gets floor(total x share); the credits left over go one each to the parties with the largest fractional parts, ties to the party listed first in the envelope. The parts add up to the total (credits_used).',
  cases: splits,
});

// --- Envelopes ---------------------------------------------------------------------------------------------------
const ISSUED_AT = new Date('2026-11-23T10:00:00Z');
const EXPIRES = new Date('2026-11-23T10:02:00Z');
/** A time at which every valid envelope below is current. */
const VALID_AT = '2026-11-23T10:01:00Z';

interface VectorParty {
  party: string;
  seed_hex: string;
  public_key: string;
  kid: string;
  share: string;
}

const party = (name: string, share: string): VectorParty => {
  const seed = seedFrom(name);
  return { party: name, seed_hex: toHex(seed), public_key: toBase64Url(publicKeyFromSeed(seed)), kid: kidOfSeed(seed), share };
};

interface EnvelopeCase {
  name: string;
  request: { method: string; url: string; body: string };
  price_credits: number;
  total_credits: number;
  parties: VectorParty[];
  nonce: string;
  env_id: string;
}

function seedsOf(parties: readonly VectorParty[]): Map<string, Uint8Array> {
  return new Map(parties.map((p) => [p.party, Uint8Array.from(Buffer.from(p.seed_hex, 'hex'))]));
}

function unsignedOf(c: EnvelopeCase): UnsignedEnvelope {
  return {
    v: 1,
    env_id: c.env_id,
    htm: c.request.method,
    htu: c.request.url,
    body_digest: formatSha256Digest(sha256(utf8(c.request.body))),
    total_credits: c.total_credits,
    nonce: c.nonce,
    issued_at: formatIssuedAt(ISSUED_AT),
    expires: formatIssuedAt(EXPIRES),
    parties: c.parties.map((p) => ({ party: p.party, kid: p.kid, share: p.share })),
  };
}

const cases: EnvelopeCase[] = [
  {
    name: 'two parties, search depth 1, equal shares',
    request: { method: 'POST', url: 'https://notary.example/v1/search', body: '{"query":"vacuum","depth":1}' },
    price_credits: 1,
    total_credits: 1,
    parties: [party('alice', '0.5'), party('bob', '0.5')],
    nonce: 'bm9uY2UtMDAwMDAwMDAx',
    env_id: 'env_vector0000000000001',
  },
  {
    name: 'three parties, search depth 2, 0.5/0.25/0.25',
    request: { method: 'POST', url: 'https://notary.example/v1/search', body: '{"query":"vacuum dead tuples","depth":2}' },
    price_credits: 2,
    total_credits: 2,
    parties: [party('alice', '0.5'), party('bob', '0.25'), party('carol', '0.25')],
    nonce: 'bm9uY2UtMDAwMDAwMDAy',
    env_id: 'env_vector0000000000002',
  },
  {
    name: 'one third each of 1 credit',
    request: { method: 'POST', url: 'https://notary.example/v1/search', body: '{"query":"analyze","depth":1}' },
    price_credits: 1,
    total_credits: 3,
    parties: [party('alice', '0.333333'), party('bob', '0.333333'), party('carol', '0.333334')],
    nonce: 'bm9uY2UtMDAwMDAwMDAz',
    env_id: 'env_vector0000000000003',
  },
  {
    name: 'seven parties, search depth 3 (4 credits)',
    request: { method: 'POST', url: 'https://notary.example/v1/search', body: '{"query":"write-ahead log","depth":3}' },
    price_credits: 4,
    total_credits: 4,
    parties: ['p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7'].map((name, i) => party(name, equalShares(7)[i] ?? '0')),
    nonce: 'bm9uY2UtMDAwMDAwMDA0',
    env_id: 'env_vector0000000000004',
  },
  {
    name: 'a share of 0.000001, a non-ASCII party name, an extraction',
    request: { method: 'POST', url: 'https://notary.example/v1/extract', body: '{"url":"https://example.org/","mode":"excerpt"}' },
    price_credits: 1,
    total_credits: 1,
    parties: [party('Zoë Café', '0.000001'), party('bob', '0.999999')],
    nonce: 'bm9uY2UtMDAwMDAwMDA1',
    env_id: 'env_vector0000000000005',
  },
];

const valid = cases.map((c) => {
  const unsigned = unsignedOf(c);
  const envelope = signEnvelope(unsigned, seedsOf(c.parties));
  const credits = splitCredits(c.price_credits, c.parties.map((p) => parseShare(p.share) ?? -1n));
  return {
    name: c.name,
    request: c.request,
    price_credits: c.price_credits,
    parties: c.parties,
    unsigned,
    jcs: canonicalJson(unsigned),
    signing_input_hex: toHex(envelopeSigningInput(unsigned)),
    envelope,
    encoded: encodeEnvelope(envelope),
    receipts: c.parties.map((p, i) => ({ party: p.party, credits: credits[i] ?? 0, share: p.share })),
  };
});

const base = cases[1] as EnvelopeCase;
const baseEnvelope = (valid[1] as (typeof valid)[number]).envelope;
const raw = (value: unknown) => toBase64Url(utf8(JSON.stringify(value)));
const edited = (mutate: (e: Envelope) => void): Envelope => {
  const copy = structuredClone(baseEnvelope);
  mutate(copy);
  return copy;
};
const resigned = (mutate: (e: UnsignedEnvelope) => void): Envelope => {
  const unsigned = unsignedOf(base);
  mutate(unsigned);
  return signEnvelope(unsigned, seedsOf(base.parties));
};

const invalid: Array<{ name: string; encoded: string; request?: EnvelopeCase['request']; price_credits?: number; now?: string; code: string; party?: string }> = [
  { name: 'not base64url', encoded: 'eyJ2IjoxfQ==!', code: 'mpp_envelope_encoding' },
  { name: 'not JSON', encoded: toBase64Url(utf8('{"v":1,')), code: 'mpp_envelope_json' },
  { name: 'version 2', encoded: raw({ ...baseEnvelope, v: 2 }), code: 'mpp_version_unsupported' },
  { name: 'a member the format does not define', encoded: raw({ ...baseEnvelope, max_depth: 1 }), code: 'mpp_envelope_invalid' },
  { name: 'total_credits changed after signing', encoded: encodeEnvelope(edited((e) => (e.total_credits = 20))), code: 'mpp_bad_signature', party: 'alice' },
  {
    name: 'shares moved after signing',
    encoded: encodeEnvelope(
      edited((e) => {
        e.parties[1]!.share = '0.24';
        e.parties[2]!.share = '0.26';
      }),
    ),
    code: 'mpp_bad_signature',
    party: 'alice',
  },
  {
    name: "bob's signature under alice's name",
    encoded: encodeEnvelope(edited((e) => (e.authorizations[0]!.sig = e.authorizations[1]!.sig))),
    code: 'mpp_bad_signature',
    party: 'alice',
  },
  { name: "carol's authorization missing", encoded: encodeEnvelope(edited((e) => e.authorizations.pop())), code: 'mpp_missing_authorization', party: 'carol' },
  { name: 'bob listed twice', encoded: encodeEnvelope(resigned((e) => (e.parties[2] = { ...e.parties[1]!, share: '0.25' }))), code: 'mpp_duplicate_party', party: 'bob' },
  { name: 'a share with 7 decimals', encoded: encodeEnvelope(resigned((e) => (e.parties[0]!.share = '0.5000000'))), code: 'mpp_share_malformed', party: 'alice' },
  { name: 'a share as a JSON number', encoded: raw({ ...baseEnvelope, parties: baseEnvelope.parties.map((p, i) => (i === 0 ? { ...p, share: 0.5 } : p)) }), code: 'mpp_share_malformed', party: 'alice' },
  { name: 'shares summing to 0.999999', encoded: encodeEnvelope(resigned((e) => (e.parties[2]!.share = '0.249999'))), code: 'mpp_shares_not_one' },
  { name: 'another body', encoded: (valid[1] as (typeof valid)[number]).encoded, request: { ...base.request, body: '{"query":"vacuum dead tuples","depth":2} ' }, code: 'mpp_body_digest_mismatch' },
  { name: 'another path', encoded: (valid[1] as (typeof valid)[number]).encoded, request: { ...base.request, url: 'https://notary.example/v1/extract' }, code: 'mpp_url_mismatch' },
  { name: 'another method', encoded: (valid[1] as (typeof valid)[number]).encoded, request: { ...base.request, method: 'PUT' }, code: 'mpp_method_mismatch' },
  { name: 'a price above total_credits', encoded: (valid[1] as (typeof valid)[number]).encoded, price_credits: 4, code: 'mpp_total_below_price' },
  { name: 'expired (past expires plus 30 s of clock skew)', encoded: (valid[1] as (typeof valid)[number]).encoded, now: '2026-11-23T10:02:31Z', code: 'mpp_envelope_expired' },
  { name: 'issued in the future (beyond 30 s of clock skew)', encoded: (valid[1] as (typeof valid)[number]).encoded, now: '2026-11-23T09:59:29Z', code: 'mpp_issued_in_future' },
  {
    name: 'expiring 301 s after issue',
    encoded: encodeEnvelope(resigned((e) => (e.expires = formatIssuedAt(new Date(ISSUED_AT.getTime() + 301_000))))),
    code: 'mpp_expiry_too_far',
  },
];

write('mpp-envelopes.json', {
  description:
    'MPP envelopes (field-notes §5). Authorization: MPP envelope=<base64url of the envelope JSON>. Each party signs UTF-8("mpp-envelope-v1\\n" + JCS(envelope without authorizations)) with Ed25519 (RFC 8032); sig = "ed25519:" + base64url(signature), no padding; kid = RFC 7638 thumbprint of the party key; body_digest = "sha-256=:" + base64(SHA-256(body bytes)) + ":". The server binds htm, the path and query of htu, and body_digest to the request, refuses a price above total_credits, checks issued_at/expires (lifetime at most 300 s, 30 s clock skew), and splits the price by the largest-remainder rule (mpp-splits.json). Keys here are test keys derived from public labels: never use them.',
  signing_prefix: 'mpp-envelope-v1\n',
  valid_at: VALID_AT,
  clock_skew_s: 30,
  max_lifetime_s: 300,
  cases: valid,
  invalid: invalid.map((i) => ({ ...i, request: i.request ?? base.request, price_credits: i.price_credits ?? base.price_credits, now: i.now ?? VALID_AT })),
});
console.log(`wrote ${splits.length} splits, ${valid.length} envelopes and ${invalid.length} refusals to ${out}`);
