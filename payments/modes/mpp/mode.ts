import type { MppSettings } from './config.js';
import { NotaryError } from '../../../core/index.js';
import type { Accounts, MultiDebitOutcome } from '../../accounts.js';
import { singleHeader, type PaymentCredential, type PaymentMode, type PaymentRequest } from '../../mode.js';
import { parseIdempotencyKey } from '../../paid-call.js';
import type { Price } from '../../pricing.js';
import { formatSha256Digest, parseSha256Digest, sha256 } from '../../crypto/digest.js';
import { bytesEqual, toBase64Url } from '../../crypto/encoding.js';
import { envelopeParameter, isMppAuthorization, parseEnvelope, type ParsedEnvelope } from './envelope.js';
import { MPP_REALM, mppError } from './errors.js';
import type { Parties, VerifiedParty } from './parties.js';
import { splitCredits } from './shares.js';
import { mppHoldKey, settleMppHold, type MppHoldRecord } from './holds.js';

/** A settled share of the charge, one per paying party; the receipts add up to credits_used. */
export interface PartyReceipt {
  party: string;
  credits: number;
  share: string;
}

export type MppConfig = MppSettings;

/** The OpenAPI security scheme of MPP envelopes. */
export const MPP_SECURITY_SCHEME = {
  key: 'mpp',
  scheme: {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description: 'Several parties share the cost: `Authorization: MPP envelope=<base64url envelope>`, signed by every party (Ed25519).',
  },
} as const;

export interface MppModeOptions {
  config: MppConfig;
  accounts: Accounts;
  parties: Parties;
  /** Milliseconds since the epoch; tests move it. */
  now?: () => number;
}

/** Nonces of envelopes that expired are deleted at most this often. */
const PRUNE_INTERVAL_MS = 60_000;

/**
 * The payer of an envelope: the sorted set of its parties' tenants, so a retry of the same call with a freshly signed
 * envelope (new nonce, new env_id, same parties) finds its Idempotency-Key, and other party sets never share keys.
 */
export function mppPayerId(tenantIds: readonly string[]): string {
  return `mpp:${toBase64Url(sha256([...tenantIds].sort().join('\n')))}`;
}

/** The path and query of a URL, or null when it does not parse. */
function pathAndQuery(url: string): { origin: string; target: string } | null {
  if (!URL.canParse(url)) return null;
  const parsed = new URL(url);
  return { origin: parsed.origin, target: `${parsed.pathname}${parsed.search}` };
}

/**
 * `Authorization: MPP envelope=<base64url>`: several parties share one call. From the header alone the envelope's
 * form, shares and party limit are checked; authenticate binds it to the request's method and URL, looks up every
 * party's key (one query) and verifies every signature; each party's own rate limit applies. authorize binds the
 * body digest, checks total_credits against the price, the times and the nonce, splits the price by the
 * largest-remainder rule and pre-checks the balances; settle debits every party its part in ONE transaction that
 * also claims the nonce, or nothing.
 */
export function mppMode(options: MppModeOptions): PaymentMode {
  const { config, accounts, parties } = options;
  const now = options.now ?? (() => Date.now());
  let lastPrune = 0;

  function bindToRequest(parsed: ParsedEnvelope, request: PaymentRequest): void {
    const { htm, htu } = parsed.envelope;
    if (htm !== request.method.toUpperCase()) {
      throw mppError('mpp_method_mismatch', `The envelope is signed for ${htm}; the request is ${request.method}`, undefined, { htm, method: request.method });
    }
    const signed = pathAndQuery(htu);
    const actual = pathAndQuery(request.url) ?? { origin: '', target: request.path };
    if (!signed || signed.target !== actual.target) {
      throw mppError('mpp_url_mismatch', `The envelope is signed for ${htu}; the request is for ${actual.target}`, undefined, { htu, request_target: actual.target });
    }
    if (config.origins.length > 0 && !config.origins.includes(signed.origin)) {
      throw mppError('mpp_url_mismatch', `The envelope names the origin ${signed.origin}; this service answers as ${config.origins.join(', ')}`, undefined, {
        htu,
        origins: config.origins,
      });
    }
  }

  function checkTimes(parsed: ParsedEnvelope): void {
    const seconds = now() / 1000;
    const skew = config.clock_skew_s;
    const { issued_at: issuedAt, expires } = parsed.envelope;
    if (parsed.issuedAt > seconds + skew) {
      throw mppError('mpp_issued_in_future', `The envelope is issued at ${issuedAt}, in the future of this service's clock`, undefined, { issued_at: issuedAt });
    }
    if (parsed.expires + skew < seconds) throw mppError('mpp_envelope_expired', `The envelope expired at ${expires}; sign a new one`, undefined, { expires });
    const lifetime = parsed.expires - parsed.issuedAt;
    if (lifetime > config.max_lifetime_s || parsed.expires > seconds + config.max_lifetime_s + skew) {
      throw mppError('mpp_expiry_too_far', `The envelope expires at ${expires}: at most ${config.max_lifetime_s} s after it is issued and from now`, undefined, {
        expires,
        max_lifetime_s: config.max_lifetime_s,
      });
    }
  }

  /** Whether a used nonce belongs to the earlier run of this very call (same payer, same Idempotency-Key, charged). */
  async function chargedBefore(request: PaymentRequest, verified: readonly VerifiedParty[], payerId: string): Promise<boolean> {
    const key = parseIdempotencyKey(singleHeader(request, 'idempotency-key'));
    if (key === null) return false;
    return accounts.repository.hasKeyedDebits(
      verified.map((v) => v.tenant.id),
      `${payerId}:${key}`,
    );
  }

  async function pruneNonces(): Promise<void> {
    const at = now();
    if (at - lastPrune < PRUNE_INTERVAL_MS) return;
    lastPrune = at;
    // A nonce is kept while its envelope could still pass the expiry check (expires + skew).
    await parties.repository.pruneNonces(new Date(at - (config.clock_skew_s + 1) * 1000).toISOString());
  }

  async function authorizeCall(parsed: ParsedEnvelope, verified: VerifiedParty[], payerId: string, request: PaymentRequest, rawBody: Uint8Array, price: Price) {
    const { envelope } = parsed;
    const digest = sha256(rawBody);
    if (!bytesEqual(parseSha256Digest(envelope.body_digest) ?? new Uint8Array(), digest)) {
      throw mppError('mpp_body_digest_mismatch', 'The envelope signs another body than the one sent: body_digest must be the SHA-256 of the exact body bytes', undefined, {
        body_digest: formatSha256Digest(digest),
      });
    }
    if (envelope.total_credits < price.credits) {
      throw mppError('mpp_total_below_price', `This call (${price.description}) costs ${price.credits} credits; the envelope covers ${envelope.total_credits}`, undefined, {
        required_credits: price.credits,
        total_credits: envelope.total_credits,
      });
    }
    checkTimes(parsed);
    if ((await parties.repository.nonceUsed(envelope.nonce)) && !(await chargedBefore(request, verified, payerId))) {
      throw mppError('mpp_nonce_replayed', `The nonce of envelope ${envelope.env_id} was used before; sign a new envelope for every call`, undefined, { env_id: envelope.env_id });
    }
    const { receipts, debits } = split(parsed, verified, price);
    // The balances read now: a cheap pre-check only, the debits are authoritative.
    const balances = await accounts.balances(verified.map((v) => v.tenant.id));
    for (const [i, { party, tenant }] of verified.entries()) {
      const required = debits[i]?.credits ?? 0;
      const available = balances.get(tenant.id) ?? 0;
      if (available < required) throw shortOfCredits(party, required, available);
    }
    return { receipts, debits };
  }

  return {
    name: 'mpp',
    securityScheme: MPP_SECURITY_SCHEME,
    // Nothing is reserved: settle splits and debits the charge, whatever part of the quote it is.
    settlesLess: true,

    identify(request): PaymentCredential | null {
      const header = singleHeader(request, 'authorization');
      if (header === undefined || !isMppAuthorization(header)) return null;
      const parsed = parseEnvelope(envelopeParameter(header), { maxParties: config.max_parties });
      return {
        mode: 'mpp',
        async authenticate() {
          bindToRequest(parsed, request);
          // Here, not only when a call is charged: an uncharged read (a crawl job's state) must not take an old envelope.
          checkTimes(parsed);
          const verified = await parties.verify(parsed);
          const payerId = mppPayerId(verified.map((v) => v.tenant.id));
          const collections = readableByAll(verified);
          return {
            mode: 'mpp',
            payerId,
            ...(collections !== null ? { collections } : {}),
            rateLimits: verified.map((v) => ({ key: `party:${v.tenant.id}`, tier: v.tenant.tier })),
            async authorize({ request: call, rawBody, price }) {
              const { receipts } = await authorizeCall(parsed, verified, payerId, call, rawBody, price);
              const { envelope } = parsed;
              // Inside the debit's transaction: the envelope's nonce is single-use, so a replay debits nobody.
              const claimNonce = async (trx: Parameters<Parties['repository']['claimNonce']>[0], requestId: string): Promise<void> => {
                const claimed = await parties.repository.claimNonce(trx, {
                  nonce: envelope.nonce,
                  env_id: envelope.env_id,
                  request_id: requestId,
                  expires_at: new Date(parsed.expires * 1000).toISOString(),
                });
                if (!claimed) throw mppError('mpp_nonce_replayed', `The nonce of envelope ${envelope.env_id} was used by another call`, undefined, { env_id: envelope.env_id });
              };
              // A debit refused for one party (gone, or short of credits), named by its party name.
              const refusal = (outcome: Extract<MultiDebitOutcome, { ok: false }>): NotaryError => {
                const party = verified.find((v) => v.tenant.id === outcome.tenantId)?.party ?? outcome.tenantId;
                if (outcome.reason === 'tenant_not_found') return mppError('mpp_unknown_party', `Party "${party}" no longer exists`, party);
                return shortOfCredits(party, outcome.required, outcome.available);
              };
              return {
                members: { receipts },
                // A charge below the quote (a batch with failed URLs) is split by the same shares.
                membersFor: (charge) => ({ receipts: split(parsed, verified, charge).receipts }),
                facts: true,
                async settle({ requestId, idempotencyKey, charge = price }) {
                  const { debits } = split(parsed, verified, charge);
                  const outcome = await accounts.debitMany(
                    { debits, requestId, idempotencyKey: idempotencyKey === null ? null : `${payerId}:${idempotencyKey}` },
                    (trx) => claimNonce(trx, requestId),
                  );
                  if (!outcome.ok) throw refusal(outcome);
                  try {
                    await pruneNonces();
                  } catch {
                    // Housekeeping only: the next call tries again.
                  }
                  return { creditsUsed: charge.credits };
                },
                // Nothing was reserved: the debits happen only in settle.
                async release() {},
                // Work charged when it ends (a crawl job): every party's share of the quote is debited now, in one
                // transaction that claims the nonce, single-use under the work's id; settleHold gives back the rest.
                async hold({ requestId, key }) {
                  const { debits } = split(parsed, verified, price);
                  const outcome = await accounts.debitMany(
                    { debits: debits.map((d) => ({ ...d, reason: `${d.reason}: held until it ends` })), requestId, idempotencyKey: mppHoldKey(key) },
                    (trx) => claimNonce(trx, requestId),
                  );
                  if (!outcome.ok) throw refusal(outcome);
                  const record: MppHoldRecord = { env_id: envelope.env_id, parties: debits.map((d) => ({ tenant_id: d.tenantId, held: d.credits })) };
                  return { mode: 'mpp', credits: price.credits, record: { ...record } };
                },
              };
            },
          };
        },
      };
    },

    settleHold: (held, settlement) => settleMppHold(accounts, held, settlement),

    async challenge({ price, error }) {
      const params = [`realm="${MPP_REALM}"`];
      if (price) params.push(`credits=${price.credits}`);
      params.push(`max_parties=${config.max_parties}`, `max_lifetime=${config.max_lifetime_s}`);
      if (error instanceof NotaryError && error.code.startsWith('mpp_')) params.push(`error="${error.code}"`);
      return {
        status: 401,
        wwwAuthenticate: `MPP ${params.join(', ')}`,
        hint: 'Authorization: MPP envelope=<envelope signed by every paying party>',
        ...(price ? { body: { total_credits: price.credits, max_parties: config.max_parties, max_lifetime_s: config.max_lifetime_s } } : {}),
      };
    },
  };
}

/** The price split by the envelope's shares (largest remainder): each party's receipt and its debit. */
/** The collections every party's key may read (a call is paid by all of them); null when no key is limited. */
export function readableByAll(verified: readonly Pick<VerifiedParty, 'collections'>[]): readonly string[] | null {
  let common: readonly string[] | null = null;
  for (const { collections } of verified) {
    if (collections === null) continue;
    common = common === null ? collections : common.filter((id) => collections.includes(id));
  }
  return common;
}

function split(parsed: ParsedEnvelope, verified: readonly VerifiedParty[], price: Price): { receipts: PartyReceipt[]; debits: Array<{ tenantId: string; credits: number; reason: string }> } {
  const { envelope } = parsed;
  const credits = splitCredits(price.credits, parsed.shares);
  const receipts: PartyReceipt[] = envelope.parties.map((p, i) => ({ party: p.party, credits: credits[i] ?? 0, share: p.share }));
  const debits = verified.map((v, i) => ({
    tenantId: v.tenant.id,
    credits: credits[i] ?? 0,
    reason: `${price.description} (MPP ${envelope.env_id}, share ${envelope.parties[i]?.share ?? '?'})`,
  }));
  return { receipts, debits };
}

function shortOfCredits(party: string, required: number, available: number): NotaryError {
  return mppError('insufficient_credits', `Party "${party}" is short of credits: its part of this call is ${required} credits, its balance ${available}`, party, {
    required_credits: required,
    available_credits: available,
  });
}
