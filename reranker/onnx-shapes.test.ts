import { describe, expect, it } from 'vitest';
import type { onnx } from 'onnx-proto';
import { inferShapes } from './onnx-shapes.js';

const node = (opType: string, input: string[], output: string[], attribute: onnx.IAttributeProto[] = []): onnx.INodeProto => ({ opType, input, output, attribute });
const input = (name: string, dims: Array<number | string>, elemType = 7): onnx.IValueInfoProto => ({
  name,
  type: { tensorType: { elemType, shape: { dim: dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) } } },
});

/**
 * The residual Adds of a BERT layer, as ONNX's shape inference names their dims: the sum of two hidden states whose
 * dims came different ways gets fresh dims; the next residual Add, whose inputs both descend from that sum through
 * MatMuls and elementwise operators, keeps the same ones (which is what lets onnxruntime fuse it).
 */
describe('symbolic shapes of a BERT layer', () => {
  it('keeps dims through MatMul and broadcasting, makes fresh ones after a computed Reshape and a mismatched Add', () => {
    const graph: onnx.IGraphProto = {
      input: [input('ids', ['batch', 'sequence'])],
      initializer: [
        { name: 'table', dataType: 1, dims: [100, 8] },
        { name: 'w', dataType: 1, dims: [8, 8] },
        { name: 'bias', dataType: 1, dims: [8] },
      ],
      node: [
        node('Gather', ['table', 'ids'], ['emb']),
        node('Shape', ['emb'], ['shape']),
        node('Reshape', ['emb', 'shape'], ['reshaped']), // a shape computed at run time: 3 fresh dims
        node('MatMul', ['reshaped', 'w'], ['dense']),
        node('Add', ['dense', 'bias'], ['dense_b']),
        node('Add', ['dense_b', 'emb'], ['residual']), // symbols differ: fresh dims
        node('LayerNormalization', ['residual'], ['ln']),
        node('MatMul', ['ln', 'w'], ['ffn']),
        node('Erf', ['ffn'], ['act']),
        node('Add', ['act', 'ln'], ['residual2']), // same symbols on both sides
      ],
    };
    const shapes = inferShapes(graph);
    const shape = (name: string): Array<number | string> | undefined => shapes.get(name)?.shape;
    expect(shape('emb')).toEqual(['batch', 'sequence', 8]);
    expect(shape('shape')).toEqual([3]);
    const reshaped = shape('reshaped') ?? [];
    expect(reshaped).toHaveLength(3);
    expect(reshaped.every((d) => typeof d === 'string' && d.startsWith('unk__'))).toBe(true);
    expect(shape('dense_b')).toEqual([reshaped[0], reshaped[1], 8]);
    const residual = shape('residual') ?? [];
    expect(residual[2]).toBe(8);
    expect(new Set([residual[0], residual[1], reshaped[0], reshaped[1], 'batch', 'sequence']).size).toBe(6);
    expect(shape('act')).toEqual(residual);
    expect(shape('residual2')).toEqual(residual);
    expect(shapes.get('residual2')?.elemType).toBe(1);
  });
});
