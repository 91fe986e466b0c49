/** Byte helpers on the web platform only (fetch-era runtimes: Node 20+, Deno, Bun, browsers). */

export const utf8 = {
  encode: (text: string): Uint8Array => new TextEncoder().encode(text),
  decode: (bytes: Uint8Array): string => new TextDecoder('utf-8', { fatal: true }).decode(bytes),
};

function toBinary(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += String.fromCharCode(b);
  return out;
}

export function toBase64(bytes: Uint8Array): string {
  return btoa(toBinary(bytes));
}

export function fromBase64(text: string): Uint8Array {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 === 1) throw new Error('not base64');
  const binary = atob(text);
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

/** RFC 4648 §5 without padding. */
export function toBase64Url(bytes: Uint8Array): string {
  return toBase64(bytes).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function fromBase64Url(text: string): Uint8Array {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) throw new Error('not base64url');
  const b64 = text.replace(/-/g, '+').replace(/_/g, '/');
  return fromBase64(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
}

export function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

export function fromHex(hex: string): Uint8Array {
  const clean = hex.startsWith('0x') ? hex.slice(2) : hex;
  if (!/^([0-9a-fA-F]{2})*$/.test(clean)) throw new Error('not hex');
  return Uint8Array.from(clean.match(/../g) ?? [], (h) => parseInt(h, 16));
}

export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}

export async function sha256(data: Uint8Array | string): Promise<Uint8Array> {
  const bytes = typeof data === 'string' ? utf8.encode(data) : data;
  return new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
}

/** RFC 9530 digest field value: `sha-256=:<base64>:`. */
export async function sha256Digest(data: Uint8Array | string): Promise<string> {
  return `sha-256=:${toBase64(await sha256(data))}:`;
}

/**
 * Version 2 `request_digest`: `hmac-sha-256=:<base64>:`, HMAC-SHA-256 over the request body keyed with the 32 bytes
 * of the response's `notary_request_salt` (base64url). The public receipt log never holds the salt.
 */
export async function saltedRequestDigest(data: Uint8Array | string, salt: string): Promise<string> {
  const key = fromBase64Url(salt);
  if (key.length !== 32) throw new Error('notary_request_salt is not 32 bytes of base64url');
  const bytes = typeof data === 'string' ? utf8.encode(data) : data;
  const hmacKey = await crypto.subtle.importKey('raw', key as Uint8Array<ArrayBuffer>, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return `hmac-sha-256=:${toBase64(new Uint8Array(await crypto.subtle.sign('HMAC', hmacKey, bytes as Uint8Array<ArrayBuffer>)))}:`;
}
