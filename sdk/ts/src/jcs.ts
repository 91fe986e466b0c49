import canonicalize from 'canonicalize';

/** RFC 8785 (JCS) canonical JSON. Throws on values JSON cannot hold (NaN, Infinity, undefined at the top). */
export function canonicalJson(value: unknown): string {
  if (typeof value === 'number' && !Number.isFinite(value)) throw new RangeError('NaN and Infinity have no JSON form');
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError('the value has no JSON form');
  return text;
}
