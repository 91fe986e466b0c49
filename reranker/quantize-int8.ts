import { createRequire } from 'node:module';
import type * as OnnxProto from 'onnx-proto';
import { NotaryError } from '../core/index.js';
import { valueInfoOf } from './onnx-shapes.js';

/**
 * Dynamic int8 quantisation of an ONNX bi-encoder, in TypeScript, reproducing what onnxruntime's
 * `quantize_dynamic(weight_type=QInt8, per_channel=True)` (onnxruntime/quantization, IntegerOps mode) writes for a
 * BERT-like graph, constant for constant and node for node:
 *
 * - a MatMul whose B is a float initializer: B to int8 per output column (axis -1), symmetric, scale =
 *   float32((2·max|w|)/254) computed in float64, zero point 0, q = clip(roundHalfEven(float32(w / scale)), -128, 127);
 *   the node becomes DynamicQuantizeLinear(A) (one per tensor, shared) + MatMulInteger + Cast(float) + Mul(scales) +
 *   Mul, which onnxruntime fuses into DynamicQuantizeMatMul / MatMulIntegerToFloat when it loads the model;
 * - a Gather whose data is a float initializer (the word, position and token-type embeddings): the table to uint8
 *   per tensor, asymmetric (the dynamic activation type), then DequantizeLinear after the Gather.
 *
 * Protobuf is read and written with onnx-proto (onnx.proto compiled for protobufjs); see docs/dependencies.md.
 */

const { onnx } = createRequire(import.meta.url)('onnx-proto') as typeof OnnxProto;
type ModelProto = OnnxProto.onnx.ModelProto;
type TensorProto = OnnxProto.onnx.TensorProto;
type INodeProto = OnnxProto.onnx.INodeProto;
type ITensorProto = OnnxProto.onnx.ITensorProto;

const FLOAT = 1;
const UINT8 = 2;
const INT8 = 3;
/** numpy.finfo(float32).tiny: a smaller scale becomes 1 (compute_scale_zp). */
const FLOAT32_TINY = 1.1754943508222875e-38;
/** Operators quantize_dynamic would rewrite in ways this port does not reproduce. */
const UNSUPPORTED_OPS = new Set(['Conv', 'Attention', 'LSTM', 'EmbedLayerNormalization', 'Gemm']);

export interface QuantizeStats {
  /** Whether the model carries the inferred tensor shapes (value_info). */
  shapes: boolean;
  matmuls: number;
  gathers: number;
  dynamicQuantizeNodes: number;
}

/** numpy.round: halves to the even neighbour. */
export function roundHalfEven(x: number): number {
  const floor = Math.floor(x);
  const diff = x - floor;
  if (diff > 0.5) return floor + 1;
  if (diff < 0.5) return floor;
  return floor % 2 === 0 ? floor : floor + 1;
}

function toNumber(value: number | { toNumber(): number }): number {
  return typeof value === 'number' ? value : value.toNumber();
}

/** The float32 values of an initializer (raw_data little-endian, or float_data). */
function floatValues(tensor: TensorProto): Float32Array {
  const count = tensor.dims.reduce<number>((n, d) => n * toNumber(d), 1);
  if (tensor.rawData && tensor.rawData.length > 0) {
    const raw = tensor.rawData;
    if (raw.length !== count * 4) throw new NotaryError('model_unavailable', `initializer ${tensor.name} has ${raw.length} bytes for ${count} floats`);
    const copy = new Uint8Array(raw); // aligned copy
    return new Float32Array(copy.buffer, 0, count);
  }
  if (tensor.dataLocation === 1) throw new NotaryError('model_unavailable', `initializer ${tensor.name} is stored in an external file; not supported`);
  return Float32Array.from(tensor.floatData);
}

/** Symmetric int8 per column of a [rows, cols] matrix, as quantize_weight_per_channel_impl(axis=-1) does. */
export function quantizePerColumnInt8(values: Float32Array, rows: number, cols: number): { q: Int8Array; scales: Float32Array } {
  const scales = new Float32Array(cols);
  const q = new Int8Array(rows * cols);
  for (let c = 0; c < cols; c++) {
    let absmax = 0; // rmin = min(min, 0), rmax = max(max, 0), absmax = max(|rmin|, |rmax|)
    for (let r = 0; r < rows; r++) {
      const a = Math.abs(values[r * cols + c] ?? 0);
      if (a > absmax) absmax = a;
    }
    const scale64 = (absmax - -absmax) / 254; // float64 (rmax - rmin) / (qmax - qmin), qmin -127, qmax 127
    const scale = scale64 < FLOAT32_TINY ? 1 : Math.fround(scale64);
    scales[c] = scale;
    for (let r = 0; r < rows; r++) {
      const v = roundHalfEven(Math.fround((values[r * cols + c] ?? 0) / scale));
      q[r * cols + c] = v < -128 ? -128 : v > 127 ? 127 : v;
    }
  }
  return { q, scales };
}

/** Asymmetric uint8 over a whole tensor, as quantize_initializer_impl with the (uint8) activation type does. */
export function quantizePerTensorUint8(values: Float32Array): { q: Uint8Array; scale: number; zeroPoint: number } {
  let min = 0;
  let max = 0;
  for (const v of values) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const scale64 = (max - min) / 255;
  let scale = 1;
  let zeroPoint = 0;
  if (scale64 >= FLOAT32_TINY) {
    zeroPoint = roundHalfEven(0 - min / scale64); // numpy.round(qmin - rmin / scale), float64, before the float32 cast
    scale = Math.fround(scale64);
  }
  const q = new Uint8Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = roundHalfEven(Math.fround((values[i] ?? 0) / scale)) + zeroPoint;
    q[i] = v < 0 ? 0 : v > 255 ? 255 : v;
  }
  return { q, scale, zeroPoint };
}

function bytesOf(array: Int8Array | Uint8Array): Uint8Array {
  return new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
}

function node(opType: string, name: string, input: string[], output: string[], attribute: INodeProto['attribute'] = []): INodeProto {
  return { opType, name, input, output, attribute, domain: '' };
}

/**
 * The int8 model of an fp32 ONNX bi-encoder (the bytes of model.onnx). Refuses graphs it does not reproduce
 * faithfully (operators quantize_dynamic handles otherwise, external data, opset below 11, subgraphs).
 */
export function quantizeDynamicInt8(fp32: Uint8Array, options: { shapes?: boolean } = {}): { bytes: Uint8Array; stats: QuantizeStats } {
  const model: ModelProto = onnx.ModelProto.decode(fp32);
  const graph = model.graph;
  if (!graph) throw new NotaryError('model_unavailable', 'the ONNX file has no graph');
  const opset = model.opsetImport.find((o) => !o.domain || o.domain === 'ai.onnx');
  if (!opset || toNumber(opset.version ?? 0) < 11) throw new NotaryError('model_unavailable', 'the ONNX model needs opset 11 or later for DynamicQuantizeLinear');
  const graphNodes = graph.node ?? [];
  const graphInitializers = graph.initializer ?? [];
  for (const n of graphNodes) {
    if (UNSUPPORTED_OPS.has(n.opType ?? '')) throw new NotaryError('model_unavailable', `the graph has a ${n.opType} node, which this int8 conversion does not handle`);
    if ((n.attribute ?? []).some((a) => a.g || (a.graphs && a.graphs.length > 0))) throw new NotaryError('model_unavailable', `node ${n.name} has a subgraph; not supported`);
  }
  // The shapes ONNX shape inference gives (quantize_dynamic keeps them): onnxruntime's fusions depend on them.
  const valueInfo = graph.valueInfo && graph.valueInfo.length > 0 ? graph.valueInfo : options.shapes === false ? [] : valueInfoOf(graph);
  const initializers = new Map<string, TensorProto>(graphInitializers.map((t) => [t.name ?? '', t as TensorProto]));
  const isFloatInit = (name: string): TensorProto | undefined => {
    const t = initializers.get(name);
    return t && t.dataType === FLOAT ? t : undefined;
  };
  const replaced = new Map<string, ITensorProto[]>(); // float initializer -> its quantized, scale and zero point
  const quantizedOutputs = new Set<string>(); // Gather outputs now produced through DequantizeLinear
  const dynamic = new Set<string>();
  const stats: QuantizeStats = { shapes: valueInfo.length > 0, matmuls: 0, gathers: 0, dynamicQuantizeNodes: 0 };
  const nodes: INodeProto[] = [];

  for (const n of graphNodes) {
    const inputs = n.input ?? [];
    const outputs = n.output ?? [];
    const weight = inputs[1];
    if (n.opType === 'MatMul' && weight !== undefined && inputs[0] !== undefined && isFloatInit(weight)) {
      const init = isFloatInit(weight) as TensorProto;
      const a = inputs[0];
      const y = outputs[0] ?? '';
      if (quantizedOutputs.has(a)) throw new NotaryError('model_unavailable', `MatMul ${n.name} reads a quantised Gather output; not supported`);
      if (init.dims.length !== 2) throw new NotaryError('model_unavailable', `MatMul ${n.name} has a weight of rank ${init.dims.length}; only rank 2 is handled`);
      if (!replaced.has(weight)) {
        const [rows, cols] = init.dims.map(toNumber) as [number, number];
        const { q, scales } = quantizePerColumnInt8(floatValues(init), rows, cols);
        replaced.set(weight, [
          { name: `${weight}_scale`, dataType: FLOAT, dims: [cols], floatData: Array.from(scales) },
          { name: `${weight}_zero_point`, dataType: INT8, dims: [cols], int32Data: new Array<number>(cols).fill(0) },
          { name: `${weight}_quantized`, dataType: INT8, dims: [rows, cols], rawData: bytesOf(q) },
        ]);
      }
      if (!dynamic.has(a)) {
        dynamic.add(a);
        stats.dynamicQuantizeNodes++;
        nodes.push(node('DynamicQuantizeLinear', `${a}_QuantizeLinear`, [a], [`${a}_quantized`, `${a}_scale`, `${a}_zero_point`]));
      }
      const base = n.name ? `${n.name}_quant` : '';
      const scalesMul = base ? `${base}_scales_mul` : `${a}_scale_${weight}_scale_mul`;
      nodes.push(node('MatMulInteger', base, [`${a}_quantized`, `${weight}_quantized`, `${a}_zero_point`, `${weight}_zero_point`], [`${y}_output_quantized`]));
      nodes.push(node('Cast', `${y}_output_quantized_cast`, [`${y}_output_quantized`], [`${y}_output_quantized_cast_output`], [{ name: 'to', type: 2, i: FLOAT }]));
      nodes.push(node('Mul', scalesMul, [`${a}_scale`, `${weight}_scale`], [`${scalesMul}:0`]));
      nodes.push(node('Mul', base ? `${base}_output_scale_mul` : '', [`${y}_output_quantized_cast_output`, `${scalesMul}:0`], [y]));
      stats.matmuls++;
      continue;
    }
    const table = inputs[0];
    if (n.opType === 'Gather' && table !== undefined && isFloatInit(table)) {
      const init = isFloatInit(table) as TensorProto;
      const y = outputs[0] ?? '';
      if (!replaced.has(table)) {
        const { q, scale, zeroPoint } = quantizePerTensorUint8(floatValues(init));
        replaced.set(table, [
          { name: `${table}_scale`, dataType: FLOAT, dims: [], floatData: [scale] },
          { name: `${table}_zero_point`, dataType: UINT8, dims: [], int32Data: [zeroPoint] },
          { name: `${table}_quantized`, dataType: UINT8, dims: init.dims, rawData: bytesOf(q) },
        ]);
      }
      nodes.push({ ...n, input: [`${table}_quantized`, ...inputs.slice(1)], output: [`${y}_quantized`] });
      nodes.push(node('DequantizeLinear', `${y}_DequantizeLinear`, [`${y}_quantized`, `${table}_scale`, `${table}_zero_point`], [y]));
      quantizedOutputs.add(y);
      stats.gathers++;
      continue;
    }
    nodes.push(n);
  }
  if (stats.matmuls === 0) throw new NotaryError('model_unavailable', 'the graph has no MatMul with a constant weight to quantise');

  // The float weights still read by a node that was not rewritten stay; the others give way to their int8 form.
  const stillRead = new Set(nodes.flatMap((n) => n.input ?? []));
  const kept: ITensorProto[] = [];
  for (const t of graphInitializers) {
    const q = replaced.get(t.name ?? '');
    if (!q || stillRead.has(t.name ?? '')) kept.push(t);
    if (q) kept.push(...q);
  }
  graph.node = nodes.map((n) => onnx.NodeProto.create(n));
  graph.initializer = kept.map((t) => onnx.TensorProto.create(t));
  graph.valueInfo = valueInfo.map((v) => onnx.ValueInfoProto.create(v));
  model.producerName = 'notary int8 (quantize_dynamic QInt8 per-channel, TypeScript)';
  model.producerVersion = '1';
  return { bytes: onnx.ModelProto.encode(model).finish(), stats };
}
