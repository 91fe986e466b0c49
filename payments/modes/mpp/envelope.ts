import { randomBytes } from 'node:crypto';
import { newId } from '../../../core/index.js';
import { formatSha256Digest, parseSha256Digest, sha256 } from '../../crypto/digest.js';
import { formatSignature, parseSignature, publicKeyFromSeed, signBytes, verifyBytes } from '../../crypto/ed25519.js';
import { fromBase64Url, toBase64Url } from '../../crypto/encoding.js';
import { canonicalJson } from '../../crypto/jcs.js';
import { jwkThumbprint } from '../../crypto/jwk.js';
import { formatIssuedAt, parseIssuedAt } from '../../receipts/receipt.js';
import { mppError } from './errors.js';
import { parseShare, SHARE_SCALE } from './shares.js';

/** The only envelope version. */
export const MPP_VERSION = 1;
/** Domain separation: each party signs these bytes followed by the JCS of the envelope without `authorizations`. */
export const ENVELOPE_SIGNING_PREFIX = 'mpp-envelope-v1\n';
/** The wire format's ceiling on an envelope's lifetime (field-notes §5). */
export const MAX_ENVELOPE_LIFETIME_S = 300;

export interface EnvelopeParty {
  /** The paying tenant's name. */
  party: string;
  /** RFC 7638 thumbprint of the party's registered Ed25519 key that signs this envelope. */
  kid: string;
  /** Decimal string, at most 6 decimals; the shares of an envelope sum to exactly 1. */
  share: string;
}

export interface EnvelopeAuthorization {
  party: string;
  /** `ed25519:<base64url>` over {@link ENVELOPE_SIGNING_PREFIX} + JCS(envelope without authorizations). */
  sig: string;
}

/** What every party signs. */
export interface UnsignedEnvelope {
  v: 1;
  env_id: string;
  /** The request method, e.g. POST. */
  htm: string;
  /** The absolute URL of the request; its path and query must be the request's. */
  htu: string;
  /** `sha-256=:<base64>:` of the exact request body bytes. */
  body_digest: string;
  /** The most this call may cost, in credits: the call's price must not exceed it. */
  total_credits: number;
  /** Single use until the envelope expires. */
  nonce: string;
  /** `YYYY-MM-DDTHH:MM:SSZ`. */
  issued_at: string;
  /** `YYYY-MM-DDTHH:MM:SSZ`, at most 5 minutes ahead. */
  expires: string;
  parties: EnvelopeParty[];
}

export interface Envelope extends UnsignedEnvelope {
  authorizations: EnvelopeAuthorization[];
}

/** An envelope whose form was checked (no database, no signature verification yet). */
export interface ParsedEnvelope {
  envelope: Envelope;
  /** Each party's share in millionths, in envelope order. */
  shares: bigint[];
  /** Seconds since the epoch. */
  issuedAt: number;
  expires: number;
  /** The exact bytes every party's signature covers. */
  signingInput: Uint8Array;
  /** Each party's 64 signature bytes, in envelope order. */
  signatures: Uint8Array[];
}

const ENVELOPE_MEMBERS = ['v', 'env_id', 'htm', 'htu', 'body_digest', 'total_credits', 'nonce', 'issued_at', 'expires', 'parties', 'authorizations'];
const PARTY_MEMBERS = ['party', 'kid', 'share'];
const AUTHORIZATION_MEMBERS = ['party', 'sig'];
const ENV_ID = /^[A-Za-z0-9._~:-]{1,128}$/;
const METHOD = /^[A-Z]{1,16}$/;
const NONCE = /^[A-Za-z0-9_-]{16,128}$/;
const KID = /^[A-Za-z0-9_-]{43}$/;
const MAX_HTU_LENGTH = 2048;
/** Tenant names are 1 to 200 characters. */
const MAX_PARTY_LENGTH = 200;
/** Far above any envelope of max_parties parties, far below anything that could hurt: checked before decoding. */
const MAX_ENCODED_LENGTH = 64 * 1024;

/** The exact bytes each party signs: the prefix line, then the JCS of the envelope without `authorizations`. */
export function envelopeSigningInput(envelope: UnsignedEnvelope | Envelope): Uint8Array {
  const { authorizations: _authorizations, ...unsigned } = envelope as Envelope;
  return new TextEncoder().encode(ENVELOPE_SIGNING_PREFIX + canonicalJson(unsigned));
}

/** base64url (no padding) of the JCS of the envelope: what `Authorization: MPP envelope=` carries. */
export function encodeEnvelope(envelope: Envelope): string {
  return toBase64Url(new TextEncoder().encode(canonicalJson(envelope)));
}

export function authorizationHeader(encoded: string): string {
  return `MPP envelope=${encoded}`;
}

const MPP_SCHEME = /^MPP(?:[ \t]|$)/i;

/** Whether an Authorization value is in the MPP scheme (case-insensitive), whatever follows. */
export function isMppAuthorization(header: string): boolean {
  return MPP_SCHEME.test(header);
}

/**
 * The `envelope` parameter of `Authorization: MPP envelope=<base64url>` (RFC 9110 auth-params: the value may be a
 * token or a quoted string; unknown parameters are ignored).
 */
export function envelopeParameter(header: string): string {
  const rest = header.replace(MPP_SCHEME, '').trim();
  const param = /\s*([A-Za-z0-9_-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^,\s"]*)\s*(?:,|$)/y;
  let found: string | undefined;
  let offset = 0;
  while (offset < rest.length) {
    param.lastIndex = offset;
    const match = param.exec(rest);
    if (!match || match[0].length === 0) {
      throw mppError('mpp_envelope_invalid', 'Authorization: MPP takes auth-params: send Authorization: MPP envelope=<base64url envelope>');
    }
    offset = param.lastIndex;
    const [, name = '', raw = ''] = match;
    if (name.toLowerCase() !== 'envelope') continue;
    if (found !== undefined) throw mppError('mpp_envelope_invalid', 'Authorization: MPP carries the envelope parameter twice');
    found = raw.startsWith('"') ? raw.slice(1, -1).replace(/\\(.)/g, '$1') : raw;
  }
  if (found === undefined || found.length === 0) {
    throw mppError('mpp_envelope_invalid', 'Authorization: MPP needs envelope=<base64url envelope>');
  }
  return found;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function onlyMembers(value: Record<string, unknown>, allowed: readonly string[], where: string, party?: string): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) throw mppError('mpp_envelope_invalid', `${where} has a member "${key}" the wire format does not define`, party);
  }
}

function stringMember(value: Record<string, unknown>, key: string, pattern: RegExp | null, hint: string, where = 'the envelope', party?: string): string {
  const member = value[key];
  if (typeof member !== 'string' || member.length === 0 || (pattern !== null && !pattern.test(member))) {
    throw mppError('mpp_envelope_invalid', `${where}: "${key}" must be ${hint}`, party);
  }
  return member;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Decodes the base64url text of an envelope into its JSON object; trailing "=" padding is tolerated. */
export function decodeEnvelopeJson(encoded: string): Record<string, unknown> {
  if (encoded.length > MAX_ENCODED_LENGTH) throw mppError('mpp_envelope_encoding', `The envelope is longer than ${MAX_ENCODED_LENGTH} characters`);
  const bytes = fromBase64Url(encoded.replace(/={1,2}$/, ''));
  if (!bytes) throw mppError('mpp_envelope_encoding', 'The envelope is not base64url (RFC 4648 §5: A-Z a-z 0-9 - _, no padding needed)');
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(bytes));
  } catch (err) {
    throw mppError('mpp_envelope_json', `The envelope is not UTF-8 JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!isRecord(value)) throw mppError('mpp_envelope_json', 'The envelope is JSON but not a JSON object');
  return value;
}

/**
 * Checks an envelope's form from the header alone, cheapest first: version, members, shares, the party limit,
 * duplicates, and that every party signed exactly once. Throws the MPP error of the first failure, naming the party
 * where there is one. Keys, signatures, times and the binding to the request are checked later.
 */
export function parseEnvelope(encoded: string, limits: { maxParties: number }): ParsedEnvelope {
  const value = decodeEnvelopeJson(encoded);
  if (!('v' in value)) throw mppError('mpp_envelope_invalid', 'The envelope has no "v" (version) member');
  if (value['v'] !== MPP_VERSION) {
    throw mppError('mpp_version_unsupported', `Envelope version ${JSON.stringify(value['v'])} is not supported; this service reads v ${MPP_VERSION}`, undefined, {
      supported_versions: [MPP_VERSION],
    });
  }
  onlyMembers(value, ENVELOPE_MEMBERS, 'The envelope');
  for (const key of ENVELOPE_MEMBERS) {
    if (!(key in value)) throw mppError('mpp_envelope_invalid', `The envelope has no "${key}" member`);
  }
  stringMember(value, 'env_id', ENV_ID, '1 to 128 characters of A-Z a-z 0-9 . _ ~ : -');
  stringMember(value, 'htm', METHOD, 'the request method in capitals, e.g. POST');
  const htu = stringMember(value, 'htu', null, 'the absolute URL of the request');
  if (htu.length > MAX_HTU_LENGTH || !URL.canParse(htu) || !/^https?:$/.test(new URL(htu).protocol)) {
    throw mppError('mpp_envelope_invalid', `The envelope: "htu" must be an absolute http(s) URL of at most ${MAX_HTU_LENGTH} characters`);
  }
  const digest = stringMember(value, 'body_digest', null, 'sha-256=:<base64 of the SHA-256 of the body>:');
  if (!parseSha256Digest(digest)) throw mppError('mpp_envelope_invalid', 'The envelope: "body_digest" must be sha-256=:<base64 of the SHA-256 of the body>:');
  const total = value['total_credits'];
  if (typeof total !== 'number' || !Number.isSafeInteger(total) || total < 0) {
    throw mppError('mpp_envelope_invalid', 'The envelope: "total_credits" must be a non-negative integer');
  }
  stringMember(value, 'nonce', NONCE, '16 to 128 base64url characters');
  const issuedAt = parseIssuedAt(stringMember(value, 'issued_at', null, 'YYYY-MM-DDTHH:MM:SSZ'));
  const expires = parseIssuedAt(stringMember(value, 'expires', null, 'YYYY-MM-DDTHH:MM:SSZ'));
  if (issuedAt === null) throw mppError('mpp_envelope_invalid', 'The envelope: "issued_at" must be a UTC time written YYYY-MM-DDTHH:MM:SSZ');
  if (expires === null) throw mppError('mpp_envelope_invalid', 'The envelope: "expires" must be a UTC time written YYYY-MM-DDTHH:MM:SSZ');
  if (expires <= issuedAt) throw mppError('mpp_envelope_invalid', 'The envelope: "expires" must be after "issued_at"');

  const parties = value['parties'];
  if (!Array.isArray(parties) || parties.length === 0) throw mppError('mpp_envelope_invalid', 'The envelope: "parties" must be a non-empty array');
  if (parties.length > limits.maxParties) {
    throw mppError('mpp_too_many_parties', `The envelope lists ${parties.length} parties; this service takes at most ${limits.maxParties}`, undefined, {
      max_parties: limits.maxParties,
    });
  }
  const names: string[] = [];
  const shares: bigint[] = [];
  for (const [i, entry] of parties.entries()) {
    if (!isRecord(entry)) throw mppError('mpp_envelope_invalid', `The envelope: parties[${i}] must be an object {party, kid, share}`);
    const where = `The envelope: parties[${i}]`;
    const name = stringMember(entry, 'party', null, 'the name of a party (tenant)', where);
    if (name.length > MAX_PARTY_LENGTH) throw mppError('mpp_envelope_invalid', `${where}: "party" is longer than ${MAX_PARTY_LENGTH} characters`);
    onlyMembers(entry, PARTY_MEMBERS, where, name);
    stringMember(entry, 'kid', KID, 'the RFC 7638 thumbprint of the party key (43 base64url characters)', where, name);
    if (names.includes(name)) throw mppError('mpp_duplicate_party', `Party "${name}" is listed twice in the envelope`, name);
    const share = entry['share'];
    const parsed = typeof share === 'string' ? parseShare(share) : null;
    if (parsed === null) {
      throw mppError('mpp_share_malformed', `The share of party "${name}" (${JSON.stringify(share)}) must be a decimal string such as "0.5" or "0.333333" (at most 6 decimals)`, name);
    }
    names.push(name);
    shares.push(parsed);
  }
  const sum = shares.reduce((a, b) => a + b, 0n);
  if (sum !== SHARE_SCALE) {
    const whole = sum / SHARE_SCALE;
    const fraction = (sum % SHARE_SCALE).toString().padStart(6, '0');
    throw mppError('mpp_shares_not_one', `The shares sum to ${whole}.${fraction}, not exactly 1`, undefined, { share_sum: `${whole}.${fraction}` });
  }

  const authorizations = value['authorizations'];
  if (!Array.isArray(authorizations)) throw mppError('mpp_envelope_invalid', 'The envelope: "authorizations" must be an array of {party, sig}');
  const signatures = new Map<string, Uint8Array>();
  for (const [i, entry] of authorizations.entries()) {
    if (!isRecord(entry)) throw mppError('mpp_envelope_invalid', `The envelope: authorizations[${i}] must be an object {party, sig}`);
    const where = `The envelope: authorizations[${i}]`;
    const name = stringMember(entry, 'party', null, 'the name of a listed party', where);
    onlyMembers(entry, AUTHORIZATION_MEMBERS, where, name);
    if (!names.includes(name)) throw mppError('mpp_envelope_invalid', `${where} is signed by "${name}", which the envelope does not list as a party`, name);
    if (signatures.has(name)) throw mppError('mpp_duplicate_party', `Party "${name}" signed the envelope twice`, name);
    const sig = typeof entry['sig'] === 'string' ? parseSignature(entry['sig']) : null;
    if (!sig) throw mppError('mpp_bad_signature', `The signature of party "${name}" is not ed25519:<64 bytes in base64url>`, name);
    signatures.set(name, sig);
  }
  const ordered: Uint8Array[] = [];
  for (const name of names) {
    const sig = signatures.get(name);
    if (!sig) throw mppError('mpp_missing_authorization', `Party "${name}" did not sign the envelope (no authorization)`, name);
    ordered.push(sig);
  }
  const envelope = value as unknown as Envelope;
  return { envelope, shares, issuedAt, expires, signingInput: envelopeSigningInput(envelope), signatures: ordered };
}

/** Whether `signature` is the party key's signature of the envelope's signing input. */
export function verifyPartySignature(parsed: ParsedEnvelope, index: number, publicKey: Uint8Array): boolean {
  const signature = parsed.signatures[index];
  return signature !== undefined && verifyBytes(signature, parsed.signingInput, publicKey);
}

/** A party's private key (32-byte Ed25519 seed) with what the envelope says about it. */
export interface PartySigner {
  party: string;
  share: string;
  seed: Uint8Array;
}

export interface BuildEnvelopeOptions {
  method: string;
  url: string;
  /** The exact request body bytes that will be sent. */
  body: Uint8Array | string;
  totalCredits: number;
  parties: readonly PartySigner[];
  /** Lifetime in seconds (at most 300). Default 120. */
  ttlSeconds?: number;
  issuedAt?: Date;
  nonce?: string;
  envId?: string;
}

/** kid of an Ed25519 private key: the RFC 7638 thumbprint of its public key. */
export function kidOfSeed(seed: Uint8Array): string {
  return jwkThumbprint(publicKeyFromSeed(seed));
}

/** Signs an unsigned envelope with each party's key, authorizations in party order. */
export function signEnvelope(unsigned: UnsignedEnvelope, seeds: ReadonlyMap<string, Uint8Array>): Envelope {
  const input = envelopeSigningInput(unsigned);
  const authorizations = unsigned.parties.map(({ party }) => {
    const seed = seeds.get(party);
    if (!seed) throw new Error(`no private key for party "${party}"`);
    return { party, sig: formatSignature(signBytes(input, seed)) };
  });
  return { ...unsigned, authorizations };
}

/**
 * Builds and signs an envelope for one request, as a client (or `notary mpp envelope`) does: binds the method, the
 * URL and the digest of the exact body bytes, a fresh nonce and id, and a short expiry.
 */
export function buildEnvelope(options: BuildEnvelopeOptions): { envelope: Envelope; encoded: string } {
  const ttl = options.ttlSeconds ?? 120;
  if (!Number.isSafeInteger(ttl) || ttl < 1 || ttl > MAX_ENVELOPE_LIFETIME_S) throw new RangeError(`ttlSeconds must be 1..${MAX_ENVELOPE_LIFETIME_S}, got ${ttl}`);
  const issued = new Date(Math.floor((options.issuedAt ?? new Date()).getTime() / 1000) * 1000);
  const body = typeof options.body === 'string' ? new TextEncoder().encode(options.body) : options.body;
  const unsigned: UnsignedEnvelope = {
    v: 1,
    env_id: options.envId ?? newId('env'),
    htm: options.method.toUpperCase(),
    htu: options.url,
    body_digest: formatSha256Digest(sha256(body)),
    total_credits: options.totalCredits,
    nonce: options.nonce ?? toBase64Url(new Uint8Array(randomBytes(18))),
    issued_at: formatIssuedAt(issued),
    expires: formatIssuedAt(new Date(issued.getTime() + ttl * 1000)),
    parties: options.parties.map((p) => ({ party: p.party, kid: kidOfSeed(p.seed), share: p.share })),
  };
  const envelope = signEnvelope(unsigned, new Map(options.parties.map((p) => [p.party, p.seed])));
  return { envelope, encoded: encodeEnvelope(envelope) };
}
