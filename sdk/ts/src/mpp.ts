import { formatSignature, publicKeyFromSeed, signEd25519 } from './ed25519.js';
import { sha256Digest, toBase64Url, utf8 } from './encoding.js';
import { canonicalJson } from './jcs.js';
import { jwkThumbprint } from './jwk.js';

/**
 * MPP (multi-party payment): one call, several paying parties, each signing its share. Wire format: `Authorization:
 * MPP envelope=<base64url of the JCS of the envelope>`; every party signs `"mpp-envelope-v1\n"` + JCS(envelope
 * without `authorizations`) with Ed25519.
 */
export const ENVELOPE_SIGNING_PREFIX = 'mpp-envelope-v1\n';
export const MAX_ENVELOPE_LIFETIME_S = 300;
export const SHARE_PATTERN = /^(0|[1-9]\d*)(\.\d{1,6})?$/;
const SHARE_SCALE = 1_000_000n;

export interface EnvelopeParty {
  party: string;
  kid: string;
  share: string;
}

export interface UnsignedEnvelope {
  v: 1;
  env_id: string;
  htm: string;
  htu: string;
  body_digest: string;
  total_credits: number;
  nonce: string;
  issued_at: string;
  expires: string;
  parties: EnvelopeParty[];
}

export interface Envelope extends UnsignedEnvelope {
  authorizations: Array<{ party: string; sig: string }>;
}

/** A paying party: its tenant name, its share (a decimal string, at most 6 decimals) and its Ed25519 private key. */
export interface MppParty {
  party: string;
  share: string;
  /** 32-byte Ed25519 seed. */
  privateKey: Uint8Array;
}

/** A share in millionths, exactly (never through a float); null when it is not a share string. */
export function parseShare(share: string): bigint | null {
  if (!SHARE_PATTERN.test(share)) return null;
  const [whole = '0', fraction = ''] = share.split('.');
  return BigInt(whole) * SHARE_SCALE + BigInt(fraction.padEnd(6, '0'));
}

/**
 * Each party's credits of `total`: floor(total x share), the leftover credits one each to the largest fractional
 * parts, ties to the party listed first (what the service charges and lists in `receipts`).
 */
export function splitCredits(total: number, shares: readonly string[]): number[] {
  const parsed = shares.map((s) => {
    const v = parseShare(s);
    if (v === null) throw new RangeError(`not a share: ${JSON.stringify(s)}`);
    return v;
  });
  if (parsed.reduce((a, b) => a + b, 0n) !== SHARE_SCALE) throw new RangeError('shares must sum to exactly 1');
  const exact = parsed.map((share) => BigInt(total) * share);
  const parts = exact.map((v) => v / SHARE_SCALE);
  let leftover = BigInt(total) - parts.reduce((a, b) => a + b, 0n);
  const order = exact.map((v, index) => ({ index, remainder: v % SHARE_SCALE })).sort((a, b) => (a.remainder === b.remainder ? 0 : a.remainder > b.remainder ? -1 : 1));
  for (const { index } of order) {
    if (leftover === 0n) break;
    parts[index] = (parts[index] as bigint) + 1n;
    leftover -= 1n;
  }
  return parts.map(Number);
}

export function envelopeSigningInput(envelope: UnsignedEnvelope | Envelope): Uint8Array {
  const { authorizations: _authorizations, ...unsigned } = envelope as Envelope;
  return utf8.encode(ENVELOPE_SIGNING_PREFIX + canonicalJson(unsigned));
}

export function encodeEnvelope(envelope: Envelope): string {
  return toBase64Url(utf8.encode(canonicalJson(envelope)));
}

/** Signs an unsigned envelope with each party's key (authorizations in party order). */
export async function signEnvelope(unsigned: UnsignedEnvelope, keys: ReadonlyMap<string, Uint8Array>): Promise<Envelope> {
  const input = envelopeSigningInput(unsigned);
  const authorizations = [];
  for (const { party } of unsigned.parties) {
    const key = keys.get(party);
    if (!key) throw new Error(`no private key for party "${party}"`);
    authorizations.push({ party, sig: formatSignature(await signEd25519(input, key)) });
  }
  return { ...unsigned, authorizations };
}

function isoSeconds(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}

/** The RFC 7638 thumbprint (kid) of a party's key, as `notary parties add-key` registers it. */
export async function partyKid(privateKey: Uint8Array): Promise<string> {
  return jwkThumbprint(await publicKeyFromSeed(privateKey));
}

export interface BuildEnvelopeOptions {
  method: string;
  url: string;
  body: Uint8Array | string;
  /** The most the call may cost, in credits. */
  totalCredits: number;
  parties: readonly MppParty[];
  /** 1..300 seconds; default 120. */
  ttlSeconds?: number;
  now?: number;
  nonce?: string;
  envId?: string;
}

/** Builds and signs the envelope for one request (fresh nonce and id each time). */
export async function buildEnvelope(options: BuildEnvelopeOptions): Promise<{ envelope: Envelope; encoded: string; header: string }> {
  const ttl = options.ttlSeconds ?? 120;
  if (!Number.isSafeInteger(ttl) || ttl < 1 || ttl > MAX_ENVELOPE_LIFETIME_S) throw new RangeError(`ttlSeconds must be 1..${MAX_ENVELOPE_LIFETIME_S}`);
  for (const p of options.parties) if (parseShare(p.share) === null) throw new RangeError(`party ${p.party}: share ${JSON.stringify(p.share)} is not a decimal string with at most 6 decimals`);
  const issued = Math.floor((options.now ?? Date.now()) / 1000) * 1000;
  const random = (n: number) => toBase64Url(crypto.getRandomValues(new Uint8Array(n)));
  const parties: EnvelopeParty[] = [];
  for (const p of options.parties) parties.push({ party: p.party, kid: await partyKid(p.privateKey), share: p.share });
  const unsigned: UnsignedEnvelope = {
    v: 1,
    env_id: options.envId ?? `env_${random(15)}`,
    htm: options.method.toUpperCase(),
    htu: options.url,
    body_digest: await sha256Digest(options.body),
    total_credits: options.totalCredits,
    nonce: options.nonce ?? random(18),
    issued_at: isoSeconds(issued),
    expires: isoSeconds(issued + ttl * 1000),
    parties,
  };
  const envelope = await signEnvelope(unsigned, new Map(options.parties.map((p) => [p.party, p.privateKey])));
  const encoded = encodeEnvelope(envelope);
  return { envelope, encoded, header: `MPP envelope=${encoded}` };
}

/** Equal shares for `count` parties summing to exactly 1 (leftover millionths to the first parties). */
export function equalShares(count: number): string[] {
  const base = SHARE_SCALE / BigInt(count);
  const extra = Number(SHARE_SCALE - base * BigInt(count));
  return Array.from({ length: count }, (_, i) => {
    const v = base + (i < extra ? 1n : 0n);
    const fraction = (v % SHARE_SCALE).toString().padStart(6, '0').replace(/0+$/, '');
    return fraction ? `${v / SHARE_SCALE}.${fraction}` : String(v / SHARE_SCALE);
  });
}
