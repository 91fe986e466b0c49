import { randomInt } from 'node:crypto';

export const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export function randomBase62(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += BASE62[randomInt(62)];
  return out;
}

/** Fixed-width base62 of a non-negative integer (left-padded with '0'). */
export function toBase62(value: number, width: number): string {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`toBase62 needs a non-negative safe integer, got ${value}`);
  let out = '';
  let rest = value;
  do {
    out = BASE62[rest % 62] + out;
    rest = Math.floor(rest / 62);
  } while (rest > 0);
  if (out.length > width) throw new RangeError(`${value} does not fit in ${width} base62 characters`);
  return out.padStart(width, '0');
}

export type IdPrefix = 'key' | 'req' | 'rcpt' | 'ten' | 'run' | 'pay' | 'env' | 'usr' | 'seed' | 'col' | 'msg' | 'whe' | 'crawl';

/** Prefixed, random, URL-safe identifiers: `req_3kT9...` (prefix + 20 base62 characters, ~119 bits). */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(20)}`;
}
