import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { NotaryError } from '../../../core/errors.js';
import { publicKeyFromSeed } from '../../crypto/ed25519.js';
import { toBase64Url } from '../../crypto/encoding.js';
import { canonicalJson } from '../../crypto/jcs.js';
import { parseIssuedAt } from '../../receipts/receipt.js';
import {
  buildEnvelope,
  encodeEnvelope,
  envelopeParameter,
  envelopeSigningInput,
  isMppAuthorization,
  parseEnvelope,
  verifyPartySignature,
  type Envelope,
} from './envelope.js';

const seed = (byte: number) => new Uint8Array(32).fill(byte);
const alice = { party: 'alice', share: '0.5', seed: seed(1) };
const bob = { party: 'bob', share: '0.5', seed: seed(2) };

function sample(overrides: Partial<Parameters<typeof buildEnvelope>[0]> = {}) {
  return buildEnvelope({
    method: 'POST',
    url: 'https://notary.example/v1/search',
    body: '{"query":"vacuum","depth":1}',
    totalCredits: 1,
    parties: [alice, bob],
    issuedAt: new Date('2026-11-23T10:00:00Z'),
    nonce: 'nonce-0123456789abcdef',
    envId: 'env_test',
    ...overrides,
  });
}

function reencode(mutate: (envelope: Record<string, unknown>) => void): string {
  const envelope = structuredClone(sample().envelope) as unknown as Record<string, unknown>;
  mutate(envelope);
  return toBase64Url(new TextEncoder().encode(JSON.stringify(envelope)));
}

function failure(encoded: string, maxParties = 16): { code: string; party: unknown } {
  try {
    parseEnvelope(encoded, { maxParties });
  } catch (err) {
    if (err instanceof NotaryError) return { code: err.code, party: err.extra['party'] };
    throw err;
  }
  return { code: 'none', party: undefined };
}

describe('MPP envelope', () => {
  it('builds, encodes and parses back: every party signs prefix + JCS of the envelope without authorizations', () => {
    const { envelope, encoded } = sample();
    expect(envelope.expires).toBe('2026-11-23T10:02:00Z');
    expect(envelope.body_digest).toBe(`sha-256=:${createHash('sha256').update('{"query":"vacuum","depth":1}').digest('base64')}:`);
    const parsed = parseEnvelope(encoded, { maxParties: 16 });
    expect(parsed.envelope).toEqual(envelope);
    expect(parsed.shares).toEqual([500_000n, 500_000n]);
    const { authorizations: _a, ...unsigned } = envelope;
    const input = new TextDecoder().decode(envelopeSigningInput(envelope));
    expect(input).toBe(`mpp-envelope-v1\n${canonicalJson(unsigned)}`);
    expect(input.startsWith('mpp-envelope-v1\n{"body_digest":"sha-256=:')).toBe(true);
    expect(verifyPartySignature(parsed, 0, publicKeyFromSeed(alice.seed))).toBe(true);
    expect(verifyPartySignature(parsed, 1, publicKeyFromSeed(bob.seed))).toBe(true);
    expect(verifyPartySignature(parsed, 0, publicKeyFromSeed(bob.seed))).toBe(false);
    // Member order and whitespace of the transported JSON do not matter: the signature covers the canonical form.
    const shuffled = toBase64Url(new TextEncoder().encode(JSON.stringify(Object.fromEntries(Object.entries(envelope).reverse()), null, 2)));
    const again = parseEnvelope(shuffled, { maxParties: 16 });
    expect(verifyPartySignature(again, 1, publicKeyFromSeed(bob.seed))).toBe(true);
  });

  it('reads the envelope parameter of the header in every legal spelling', () => {
    const { encoded } = sample();
    expect(isMppAuthorization(`MPP envelope=${encoded}`)).toBe(true);
    expect(isMppAuthorization(`mpp envelope=${encoded}`)).toBe(true);
    expect(isMppAuthorization('MPPX envelope=1')).toBe(false);
    expect(isMppAuthorization('Bearer sk_live_x')).toBe(false);
    expect(envelopeParameter(`MPP envelope=${encoded}`)).toBe(encoded);
    expect(envelopeParameter(`MPP envelope="${encoded}"`)).toBe(encoded);
    expect(envelopeParameter(`MPP  Envelope = ${encoded} , ext="x, y"`)).toBe(encoded);
    expect(envelopeParameter(`MPP other=1, envelope=${encoded}`)).toBe(encoded);
    // Padding some encoders add is tolerated.
    expect(parseEnvelope(`${encoded}==`.slice(0, encoded.length + ((4 - (encoded.length % 4)) % 4)), { maxParties: 16 }).envelope.env_id).toBe('env_test');
    for (const bad of ['MPP', 'MPP ', 'MPP envelope=', `MPP ${encoded}`, `MPP envelope=${encoded}, envelope=${encoded}`, 'MPP envelope="unterminated']) {
      expect(() => envelopeParameter(bad), bad).toThrow(NotaryError);
    }
  });

  it('refuses each form failure with its own code, naming the party where there is one', () => {
    const cases: Array<[string, string, { code: string; party?: string }]> = [
      ['not base64url', 'not base64url!', { code: 'mpp_envelope_encoding' }],
      ['standard base64 alphabet', `${sample().encoded.slice(0, 10)}+/${sample().encoded.slice(12)}`, { code: 'mpp_envelope_encoding' }],
      ['not JSON', toBase64Url(new TextEncoder().encode('{"v":1,')), { code: 'mpp_envelope_json' }],
      ['not UTF-8', toBase64Url(new Uint8Array([0x7b, 0xff, 0x7d])), { code: 'mpp_envelope_json' }],
      ['a JSON array', toBase64Url(new TextEncoder().encode('[1]')), { code: 'mpp_envelope_json' }],
      ['version 2', reencode((e) => (e['v'] = 2)), { code: 'mpp_version_unsupported' }],
      ['version "1"', reencode((e) => (e['v'] = '1')), { code: 'mpp_version_unsupported' }],
      ['no version', reencode((e) => delete e['v']), { code: 'mpp_envelope_invalid' }],
      ['no nonce', reencode((e) => delete e['nonce']), { code: 'mpp_envelope_invalid' }],
      ['an unknown member', reencode((e) => (e['max_depth'] = 1)), { code: 'mpp_envelope_invalid' }],
      ['short nonce', reencode((e) => (e['nonce'] = 'abc')), { code: 'mpp_envelope_invalid' }],
      ['fractional total', reencode((e) => (e['total_credits'] = 1.5)), { code: 'mpp_envelope_invalid' }],
      ['total as string', reencode((e) => (e['total_credits'] = '1')), { code: 'mpp_envelope_invalid' }],
      ['lower-case method', reencode((e) => (e['htm'] = 'post')), { code: 'mpp_envelope_invalid' }],
      ['relative htu', reencode((e) => (e['htu'] = '/v1/search')), { code: 'mpp_envelope_invalid' }],
      ['body digest in hex', reencode((e) => (e['body_digest'] = 'sha-256=:abcd:')), { code: 'mpp_envelope_invalid' }],
      ['fractional seconds', reencode((e) => (e['issued_at'] = '2026-11-23T10:00:00.000Z')), { code: 'mpp_envelope_invalid' }],
      ['not a date', reencode((e) => (e['expires'] = '2026-02-30T10:00:00Z')), { code: 'mpp_envelope_invalid' }],
      ['expires before issued', reencode((e) => (e['expires'] = '2026-11-23T09:00:00Z')), { code: 'mpp_envelope_invalid' }],
      ['no parties', reencode((e) => (e['parties'] = [])), { code: 'mpp_envelope_invalid' }],
      ['a party without kid', reencode((e) => delete (e['parties'] as Array<Record<string, unknown>>)[1]?.['kid']), { code: 'mpp_envelope_invalid', party: 'bob' }],
      ['an extra party member', reencode((e) => ((e['parties'] as Array<Record<string, unknown>>)[1]!['note'] = 'x')), { code: 'mpp_envelope_invalid', party: 'bob' }],
      ['share as number', reencode((e) => ((e['parties'] as Array<Record<string, unknown>>)[1]!['share'] = 0.5)), { code: 'mpp_share_malformed', party: 'bob' }],
      ['share with 7 decimals', reencode((e) => ((e['parties'] as Array<Record<string, unknown>>)[0]!['share'] = '0.5000000')), { code: 'mpp_share_malformed', party: 'alice' }],
      ['negative share', reencode((e) => ((e['parties'] as Array<Record<string, unknown>>)[0]!['share'] = '-0.5')), { code: 'mpp_share_malformed', party: 'alice' }],
      ['shares summing to 0.9', reencode((e) => ((e['parties'] as Array<Record<string, unknown>>)[0]!['share'] = '0.4')), { code: 'mpp_shares_not_one' }],
      ['shares summing to 1.000001', reencode((e) => ((e['parties'] as Array<Record<string, unknown>>)[0]!['share'] = '0.500001')), { code: 'mpp_shares_not_one' }],
      [
        'a party listed twice',
        reencode((e) => ((e['parties'] as Array<Record<string, unknown>>)[1]!['party'] = 'alice')),
        { code: 'mpp_duplicate_party', party: 'alice' },
      ],
      [
        'a party signing twice',
        reencode((e) => (e['authorizations'] as unknown[]).push((e['authorizations'] as unknown[])[0])),
        { code: 'mpp_duplicate_party', party: 'alice' },
      ],
      ['a missing authorization', reencode((e) => (e['authorizations'] as unknown[]).pop()), { code: 'mpp_missing_authorization', party: 'bob' }],
      [
        'an authorization of a stranger',
        reencode((e) => ((e['authorizations'] as Array<Record<string, unknown>>)[1]!['party'] = 'mallory')),
        { code: 'mpp_envelope_invalid', party: 'mallory' },
      ],
      [
        'a signature that is not ed25519:',
        reencode((e) => ((e['authorizations'] as Array<Record<string, unknown>>)[1]!['sig'] = 'rsa:abc')),
        { code: 'mpp_bad_signature', party: 'bob' },
      ],
    ];
    for (const [name, encoded, expected] of cases) {
      expect(failure(encoded), name).toEqual({ code: expected.code, party: expected.party });
    }
    expect(failure(sample().encoded, 1)).toEqual({ code: 'mpp_too_many_parties', party: undefined });
  });

  it('puts a 401 challenge on credential failures and none on malformed ones', () => {
    const err = (() => {
      try {
        parseEnvelope(reencode((e) => (e['authorizations'] as unknown[]).pop()), { maxParties: 16 });
      } catch (e) {
        return e as NotaryError;
      }
      throw new Error('no error');
    })();
    expect(err.status).toBe(401);
    expect(err.headers['WWW-Authenticate']).toBe('MPP realm="notary", error="mpp_missing_authorization"');
    try {
      parseEnvelope('!!', { maxParties: 16 });
    } catch (e) {
      expect((e as NotaryError).status).toBe(400);
      expect((e as NotaryError).headers).toEqual({});
    }
  });

  it('signs whatever the parties signed: a changed member breaks every signature', () => {
    const { envelope } = sample();
    for (const mutate of [
      (e: Envelope) => (e.total_credits = 2),
      (e: Envelope) => (e.parties[0]!.share = '0.50'),
      (e: Envelope) => (e.htu = 'https://notary.example/v1/search?x=1'),
      (e: Envelope) => (e.expires = '2026-11-23T10:03:00Z'),
    ]) {
      const changed = structuredClone(envelope);
      mutate(changed);
      const parsed = parseEnvelope(encodeEnvelope(changed), { maxParties: 16 });
      expect(verifyPartySignature(parsed, 0, publicKeyFromSeed(alice.seed))).toBe(false);
      expect(verifyPartySignature(parsed, 1, publicKeyFromSeed(bob.seed))).toBe(false);
    }
  });

  it('reads only real UTC timestamps without fractions', () => {
    expect(parseIssuedAt('2026-11-23T10:00:00Z')).toBe(Date.parse('2026-11-23T10:00:00Z') / 1000);
    for (const bad of ['2026-11-23T10:00:00', '2026-11-23T10:00:00+00:00', '2026-11-23 10:00:00Z', '2026-13-01T00:00:00Z', '2026-11-23T24:00:00Z']) {
      expect(parseIssuedAt(bad), bad).toBeNull();
    }
  });

  it('limits the lifetime a client can ask for', () => {
    expect(() => sample({ ttlSeconds: 301 })).toThrow(RangeError);
    expect(sample({ ttlSeconds: 300 }).envelope.expires).toBe('2026-11-23T10:05:00Z');
  });
});
