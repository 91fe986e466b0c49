import { describe, expect, it } from 'vitest';
import { isNotaryError } from '../core/errors.js';
import { tinyBertOnnx } from '../testkit/tiny-onnx.js';
import { quantizeDynamicInt8, quantizePerColumnInt8, quantizePerTensorUint8, roundHalfEven } from './quantize-int8.js';

/** The arithmetic of onnxruntime's quantize_dynamic (quant_utils.py), on values whose answers are known exactly. */
describe('int8 quantisation arithmetic', () => {
  it('rounds halves to even, as numpy.round does', () => {
    expect([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999, 2.5001].map(roundHalfEven)).toEqual([0, 2, 2, 0, -2, -2, 2, 3]);
  });

  it('quantises each column symmetrically: scale max|w|/127, zero point 0, halves to even', () => {
    // Column 0: max|w| 127 gives scale 1 exactly; column 1: all zeros gives scale 1 (below float32 tiny).
    const w = Float32Array.from([127, 0, 0.5, 0, 1.5, 0, 2.5, 0, -2.5, 0]);
    const { q, scales } = quantizePerColumnInt8(w, 5, 2);
    expect(Array.from(scales)).toEqual([1, 1]);
    expect(Array.from(q)).toEqual([127, 0, 0, 0, 2, 0, 2, 0, -2, 0]);
    const half = quantizePerColumnInt8(Float32Array.from([0.25, -0.125]), 2, 1);
    expect(half.scales[0]).toBe(Math.fround(0.5 / 254));
    expect(Array.from(half.q)).toEqual([127, -64]); // -63.5 rounds to the even -64
  });

  it('quantises an embedding table to uint8 over the whole tensor, with its zero point', () => {
    const { q, scale, zeroPoint } = quantizePerTensorUint8(Float32Array.from([-1, 0, 3]));
    expect(scale).toBe(Math.fround(4 / 255));
    expect(zeroPoint).toBe(64); // round(1 / (4/255)) = round(63.75)
    expect(Array.from(q)).toEqual([0, 64, 255]);
  });

  it('refuses a graph without MatMul weights, saying why', () => {
    let caught: unknown;
    try {
      quantizeDynamicInt8(tinyBertOnnx('bi-encoder'));
    } catch (err) {
      caught = err;
    }
    expect(isNotaryError(caught) && caught.code).toBe('model_unavailable');
    expect((caught as Error).message).toMatch(/no MatMul with a constant weight/);
  });
});
