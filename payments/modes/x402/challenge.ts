import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** What a challenge is bound to: the request (method, path, body digest) and the payment it asks for. */
export interface ChallengeBinding {
  method: string;
  path: string;
  /** SHA-256 hex of the exact body bytes. */
  bodyDigest: string;
  /** Atomic units of the asset. */
  amount: string;
  network: string;
  asset: string;
  payTo: string;
}

export interface IssuedChallenge {
  nonce: string;
  /** Unix seconds. */
  expires: number;
}

export type ChallengeCheck = { valid: false } | { valid: true; expires: number };

const NONCE = /^([A-Za-z0-9_-]{22})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/;

/**
 * Stateless challenges: the nonce carries 16 random bytes, its expiry and an HMAC-SHA256 over both and everything it
 * is bound to, so issuing one needs no database write and any node holding the secret can check it. Single use is
 * enforced where a challenge is consumed (a unique column of x402_payments), not here.
 */
export class ChallengeIssuer {
  constructor(
    private readonly secret: Uint8Array,
    private readonly ttlSeconds: number,
  ) {
    if (secret.length < 32) throw new Error('the challenge secret must be at least 32 bytes');
  }

  issue(binding: ChallengeBinding, nowMs: number): IssuedChallenge {
    const random = randomBytes(16).toString('base64url');
    const expires = Math.floor(nowMs / 1000) + this.ttlSeconds;
    return { nonce: `${random}.${expires}.${this.mac(random, expires, binding)}`, expires };
  }

  /** Whether `nonce` was issued by this secret for exactly this binding; the caller decides what expiry means. */
  check(nonce: string, binding: ChallengeBinding): ChallengeCheck {
    const match = NONCE.exec(nonce);
    if (!match) return { valid: false };
    const [, random = '', expiresText = '', mac = ''] = match;
    const expires = Number(expiresText);
    const expected = Buffer.from(this.mac(random, expires, binding));
    const given = Buffer.from(mac);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return { valid: false };
    return { valid: true, expires };
  }

  private mac(random: string, expires: number, b: ChallengeBinding): string {
    const fields = [random, String(expires), b.method.toUpperCase(), b.path, b.bodyDigest, b.amount, b.network, b.asset.toLowerCase(), b.payTo.toLowerCase()];
    return createHmac('sha256', this.secret).update(`x402-challenge-v1\n${fields.join('\n')}`).digest('base64url');
  }
}
