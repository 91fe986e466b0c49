/**
 * The cryptographic primitives the payment plug-ins share (signed receipts, x402 settlement receipts, MPP envelopes,
 * the facilitator): Ed25519 signing, hashing and digests, base64url and hex, JSON canonicalization (RFC 8785) and JWKs.
 */
export * from './digest.js';
export * from './ed25519.js';
export * from './encoding.js';
export * from './jcs.js';
export * from './jwk.js';
