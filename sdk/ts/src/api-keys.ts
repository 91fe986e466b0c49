/**
 * API keys: `sk_live_` (or `sk_test_`: a test key, never charged) + 32 base62 characters + the base62 CRC32 of those
 * 32 characters, 6 characters wide.
 */
export const API_KEY_PREFIXES = ['sk_live_', 'sk_test_'] as const;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

/** CRC-32 (IEEE 802.3, as zlib). */
export function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) c = (CRC_TABLE[(c ^ b) & 0xff] as number) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

export function apiKeyChecksum(secret: string): string {
  let n = crc32(new TextEncoder().encode(secret));
  let out = '';
  do {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  } while (n > 0);
  return out.padStart(6, '0');
}

/**
 * Why a key is malformed (prefix, length, alphabet, checksum), or null when it is well-formed. Checked before any call
 * so a mistyped key fails at once, with the reason.
 */
export function apiKeyProblem(key: string): string | null {
  const prefix = API_KEY_PREFIXES.find((p) => key.startsWith(p));
  if (!prefix) return 'API keys start with "sk_live_" or "sk_test_"';
  if (key.length !== prefix.length + 38) return `API keys are ${prefix.length + 38} characters long`;
  const body = key.slice(prefix.length);
  if (!/^[0-9A-Za-z]+$/.test(body)) return 'API keys contain only 0-9, A-Z and a-z after the prefix';
  if (apiKeyChecksum(body.slice(0, 32)) !== body.slice(32)) return 'the API key checksum does not match (mistyped or truncated?)';
  return null;
}
