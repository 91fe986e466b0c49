import { endianness } from 'node:os';
import { NotaryError } from '../core/index.js';

/** How a vector is stored in a database column: little-endian float32 bytes. */

const LITTLE_ENDIAN = endianness() === 'LE';

/** Little-endian float32 bytes of a vector (a copy: the caller may reuse its array). */
export function encodeVector(vector: Float32Array): Buffer {
  if (LITTLE_ENDIAN) return Buffer.from(new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength));
  const out = Buffer.alloc(vector.length * 4);
  for (let i = 0; i < vector.length; i++) out.writeFloatLE(vector[i]!, i * 4);
  return out;
}

/** Decodes `dimensions` little-endian float32 values from `bytes` into `target` starting at element `offset`. */
export function decodeInto(bytes: Uint8Array, target: Float32Array, offset: number, dimensions: number): void {
  if (bytes.byteLength !== dimensions * 4) {
    throw new NotaryError('internal_error', `stored vector has ${bytes.byteLength} bytes, expected ${dimensions * 4}`);
  }
  if (LITTLE_ENDIAN) {
    new Uint8Array(target.buffer, target.byteOffset + offset * 4, bytes.byteLength).set(bytes);
    return;
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < dimensions; i++) target[offset + i] = view.getFloat32(i * 4, true);
}

export function decodeVector(bytes: Uint8Array, dimensions: number): Float32Array {
  const out = new Float32Array(dimensions);
  decodeInto(bytes, out, 0, dimensions);
  return out;
}
