import canonicalize from 'canonicalize';

/**
 * RFC 8785 (JCS) canonical JSON of a value: members sorted by UTF-16 code units, no whitespace, ECMAScript number
 * form, minimal string escaping. Throws on values JSON cannot carry (NaN, Infinity, lone surrogates, undefined,
 * functions at the top level) instead of signing something a verifier cannot reproduce.
 */
export function canonicalJson(value: unknown): string {
  let text: string | undefined;
  try {
    text = canonicalize(value);
  } catch (err) {
    throw new TypeError(`value cannot be canonicalized (RFC 8785): ${err instanceof Error ? err.message : String(err)}`);
  }
  if (text === undefined) throw new TypeError('value cannot be canonicalized (RFC 8785): it has no JSON form');
  return text;
}

const encoder = new TextEncoder();

/** UTF-8 bytes of the canonical JSON. */
export function canonicalJsonBytes(value: unknown): Uint8Array {
  return encoder.encode(canonicalJson(value));
}
