import { createHash, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { NotaryError, randomBase62, toBase62 } from '../core/index.js';
import './modes/api-key/errors.js'; // registers the API-key error codes this file throws

/** Marks a live key: calls are charged. */
export const API_KEY_PREFIX = 'sk_live_';
/** Marks a test key: the same API, never charged, responses marked as test. Same length and checksum scheme. */
export const TEST_API_KEY_PREFIX = 'sk_test_';

export type ApiKeyEnvironment = 'live' | 'test';

const PREFIXES: Record<ApiKeyEnvironment, string> = { live: API_KEY_PREFIX, test: TEST_API_KEY_PREFIX };
export const API_KEY_SECRET_LENGTH = 32;
export const API_KEY_CHECKSUM_LENGTH = 6;
export const API_KEY_LENGTH = API_KEY_PREFIX.length + API_KEY_SECRET_LENGTH + API_KEY_CHECKSUM_LENGTH;
/** Characters of the secret shown after the prefix in listings. */
const DISPLAY_CHARS = 4;
const BASE62_PATTERN = /^[0-9A-Za-z]+$/;

export interface ParsedApiKey {
  /** The full key as presented. */
  key: string;
  /** SHA-256 hex of the full key: the only form stored. */
  hash: string;
  /** Display prefix, e.g. "sk_live_AbCd". */
  displayPrefix: string;
  /** Last 4 characters of the key, for display. */
  last4: string;
  /** From the prefix: sk_live_ or sk_test_. */
  environment: ApiKeyEnvironment;
}

/** Base62 CRC32 of the secret part, fixed at 6 characters (62^6 > 2^32). */
export function apiKeyChecksum(secret: string): string {
  return toBase62(crc32(secret), API_KEY_CHECKSUM_LENGTH);
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

function describe(key: string, environment: ApiKeyEnvironment): ParsedApiKey {
  return {
    key,
    hash: hashApiKey(key),
    displayPrefix: key.slice(0, API_KEY_PREFIX.length + DISPLAY_CHARS),
    last4: key.slice(-4),
    environment,
  };
}

export function generateApiKey(environment: ApiKeyEnvironment = 'live'): ParsedApiKey {
  const secret = randomBase62(API_KEY_SECRET_LENGTH);
  return describe(`${PREFIXES[environment]}${secret}${apiKeyChecksum(secret)}`, environment);
}

/**
 * Checks a presented key's shape and checksum without any database work, so typos and garbage are rejected
 * cheaply. Throws NotaryError('invalid_api_key').
 */
export function parseApiKey(raw: string): ParsedApiKey {
  const environment: ApiKeyEnvironment | undefined =
    typeof raw !== 'string' ? undefined : raw.startsWith(API_KEY_PREFIX) ? 'live' : raw.startsWith(TEST_API_KEY_PREFIX) ? 'test' : undefined;
  if (environment === undefined) {
    throw new NotaryError('invalid_api_key', `API keys start with "${API_KEY_PREFIX}" (live) or "${TEST_API_KEY_PREFIX}" (test)`);
  }
  if (raw.length !== API_KEY_LENGTH) {
    throw new NotaryError('invalid_api_key', `API keys are ${API_KEY_LENGTH} characters long`);
  }
  const body = raw.slice(API_KEY_PREFIX.length);
  if (!BASE62_PATTERN.test(body)) {
    throw new NotaryError('invalid_api_key', 'API keys contain only the characters 0-9, A-Z and a-z after the prefix');
  }
  const secret = body.slice(0, API_KEY_SECRET_LENGTH);
  const checksum = body.slice(API_KEY_SECRET_LENGTH);
  if (apiKeyChecksum(secret) !== checksum) {
    throw new NotaryError('invalid_api_key', 'The API key checksum does not match (is the key mistyped or truncated?)');
  }
  return describe(raw, environment);
}

/** Constant-time comparison of two SHA-256 hex digests. */
export function apiKeyHashesEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  if (left.length !== 32 || right.length !== 32) return false;
  return timingSafeEqual(left, right);
}
