/**
 * Symbolic shapes of a graph's tensors, as ONNX's shape inference (onnx.shape_inference, which onnxruntime's
 * quantize_dynamic runs first and whose value_info it keeps) gives them for the operators of a BERT export: a dim is
 * a number, a name from the graph inputs, or a fresh name ("unk__N") where the inference cannot tell. What matters
 * is which dims are the same: onnxruntime fuses Add + LayerNormalization into SkipLayerNormalization only when the
 * two inputs of the Add have the same three dims, so an int8 model without these shapes computes (slightly)
 * differently from the one the Python tooling writes. Operators not listed here leave their outputs unknown.
 */

import type { onnx } from 'onnx-proto';

export type Dim = number | string;
export interface TensorInfo {
  elemType: number;
  shape: Dim[];
}

const FLOAT = 1;
const INT64 = 7;
const BOOL = 9;
const SAME_SHAPE = new Set(['Cast', 'Erf', 'Sqrt', 'Softmax', 'LayerNormalization', 'Relu', 'Tanh', 'Sigmoid', 'Neg', 'Not', 'Identity', 'Gelu']);
const BROADCAST = new Set(['Add', 'Sub', 'Mul', 'Div', 'Pow', 'Equal', 'And', 'Or', 'Greater', 'GreaterOrEqual', 'Less', 'LessOrEqual', 'Where', 'Max', 'Min']);
const BOOLEAN_OUT = new Set(['Equal', 'And', 'Or', 'Greater', 'GreaterOrEqual', 'Less', 'LessOrEqual', 'Not']);

type Long = number | { toNumber(): number };
const num = (v: Long | null | undefined): number => (v === null || v === undefined ? 0 : typeof v === 'number' ? v : v.toNumber());

/** Integer values of a constant tensor (int64 raw_data or int64_data), when it is one. */
function intValues(t: onnx.ITensorProto): number[] | undefined {
  if (t.dataType !== INT64) return undefined;
  if (t.rawData && t.rawData.length > 0) {
    const view = new DataView(t.rawData.buffer, t.rawData.byteOffset, t.rawData.byteLength);
    return Array.from({ length: t.rawData.length / 8 }, (_, i) => Number(view.getBigInt64(i * 8, true)));
  }
  return (t.int64Data ?? []).map(num);
}

export function inferShapes(graph: onnx.IGraphProto): Map<string, TensorInfo> {
  let counter = 0;
  const fresh = (): string => `unk__${counter++}`;
  const infos = new Map<string, TensorInfo>();
  const constants = new Map<string, number[]>();
  for (const input of graph.input ?? []) {
    const t = input.type?.tensorType;
    if (!t?.shape) continue;
    infos.set(input.name ?? '', { elemType: t.elemType ?? FLOAT, shape: (t.shape.dim ?? []).map((d) => (d.dimParam ? d.dimParam : d.dimValue !== null && d.dimValue !== undefined ? num(d.dimValue) : fresh())) });
  }
  for (const init of graph.initializer ?? []) {
    infos.set(init.name ?? '', { elemType: init.dataType ?? FLOAT, shape: (init.dims ?? []).map(num) });
    const values = intValues(init);
    if (values) constants.set(init.name ?? '', values);
  }
  const broadcast = (shapes: Dim[][]): Dim[] => {
    const rank = Math.max(...shapes.map((s) => s.length));
    const out: Dim[] = [];
    for (let i = 0; i < rank; i++) {
      let value = 1;
      const symbols = new Set<string>();
      for (const s of shapes) {
        const d = s[i - (rank - s.length)];
        if (d === undefined) continue;
        if (typeof d === 'number') {
          if (d !== 1) value = d;
        } else symbols.add(d);
      }
      out.push(value !== 1 || symbols.size === 0 ? value : symbols.size === 1 ? ([...symbols][0] as string) : fresh());
    }
    return out;
  };
  const product = (dims: Dim[]): Dim => (dims.every((d) => typeof d === 'number') ? (dims as number[]).reduce((a, b) => a * b, 1) : fresh());

  for (const node of graph.node ?? []) {
    const op = node.opType ?? '';
    const ins = (node.input ?? []).map((name) => (name ? infos.get(name) : undefined));
    const attr = (name: string): onnx.IAttributeProto | undefined => (node.attribute ?? []).find((a) => a.name === name);
    const first = ins[0];
    const out = node.output?.[0];
    if (!out) continue;
    let result: TensorInfo | undefined;
    if (op === 'Constant') {
      const t = attr('value')?.t;
      if (t) {
        result = { elemType: t.dataType ?? FLOAT, shape: (t.dims ?? []).map(num) };
        const values = intValues(t);
        if (values) constants.set(out, values);
      }
    } else if (!first) {
      // an input of unknown shape: the output stays unknown
    } else if (SAME_SHAPE.has(op)) {
      result = { elemType: op === 'Cast' ? num(attr('to')?.i) : BOOLEAN_OUT.has(op) ? BOOL : first.elemType, shape: [...first.shape] };
    } else if (BROADCAST.has(op)) {
      if (ins.every((i) => i !== undefined)) {
        const elemType = BOOLEAN_OUT.has(op) ? BOOL : op === 'Where' ? (ins[1] as TensorInfo).elemType : first.elemType;
        result = { elemType, shape: broadcast(ins.map((i) => (i as TensorInfo).shape)) };
      }
    } else if (op === 'Shape') {
      result = { elemType: INT64, shape: [first.shape.length] };
    } else if (op === 'Gather') {
      const indices = ins[1];
      const axis = (num(attr('axis')?.i) + first.shape.length) % Math.max(first.shape.length, 1);
      if (indices) result = { elemType: first.elemType, shape: [...first.shape.slice(0, axis), ...indices.shape, ...first.shape.slice(axis + 1)] };
    } else if (op === 'Unsqueeze') {
      const axes = constants.get(node.input?.[1] ?? '') ?? (attr('axes')?.ints ?? []).map(num);
      const rank = first.shape.length + axes.length;
      const at = new Set(axes.map((a) => (a + rank) % rank));
      const rest = [...first.shape];
      result = { elemType: first.elemType, shape: Array.from({ length: rank }, (_, j) => (at.has(j) ? 1 : (rest.shift() as Dim))) };
    } else if (op === 'Concat') {
      if (ins.every((i) => i !== undefined)) {
        const all = ins as TensorInfo[];
        const axis = (num(attr('axis')?.i) + first.shape.length) % first.shape.length;
        result = { elemType: first.elemType, shape: first.shape.map((d, i) => (i === axis ? sumDims(all.map((s) => s.shape[i] as Dim), fresh) : d)) };
      }
    } else if (op === 'Reshape') {
      const target = constants.get(node.input?.[1] ?? '');
      const shapeOfShape = ins[1]?.shape;
      if (target) {
        result = { elemType: first.elemType, shape: target.map((v, i) => (v === 0 ? (first.shape[i] as Dim) : v === -1 ? fresh() : v)) };
        const known = result.shape.filter((d): d is number => typeof d === 'number').reduce((a, b) => a * b, 1);
        const total = product(first.shape);
        if (target.includes(-1) && typeof total === 'number') result.shape = result.shape.map((d, i) => (target[i] === -1 ? total / known : d));
      } else if (shapeOfShape && typeof shapeOfShape[0] === 'number') {
        result = { elemType: first.elemType, shape: Array.from({ length: shapeOfShape[0] }, () => fresh()) };
      }
    } else if (op === 'Transpose') {
      const perm = (attr('perm')?.ints ?? []).map(num);
      const order = perm.length > 0 ? perm : first.shape.map((_, i) => first.shape.length - 1 - i);
      result = { elemType: first.elemType, shape: order.map((p) => first.shape[p] as Dim) };
    } else if (op === 'MatMul') {
      const b = ins[1];
      if (b && first.shape.length >= 2 && b.shape.length >= 2) {
        const batch = broadcast([first.shape.slice(0, -2), b.shape.slice(0, -2)]);
        result = { elemType: first.elemType, shape: [...batch, first.shape[first.shape.length - 2] as Dim, b.shape[b.shape.length - 1] as Dim] };
      }
    } else if (op === 'Slice') {
      const allConstant = (node.input ?? []).slice(1).every((name) => !name || constants.has(name));
      if (!allConstant) result = { elemType: first.elemType, shape: first.shape.map(() => fresh()) };
    } else if (op === 'Range') {
      result = { elemType: first.elemType, shape: [fresh()] };
    } else if (op === 'Flatten') {
      const axis = attr('axis') ? num(attr('axis')?.i) : 1;
      result = { elemType: first.elemType, shape: [product(first.shape.slice(0, axis)), product(first.shape.slice(axis))] };
    } else if (op === 'ConstantOfShape') {
      const target = constants.get(node.input?.[0] ?? '');
      const elemType = attr('value')?.t?.dataType ?? FLOAT;
      if (target) result = { elemType, shape: target };
      else if (typeof first.shape[0] === 'number') result = { elemType, shape: Array.from({ length: first.shape[0] }, () => fresh()) };
    } else if (op === 'Expand') {
      const target = constants.get(node.input?.[1] ?? '');
      const n = ins[1]?.shape[0];
      if (target) result = { elemType: first.elemType, shape: broadcast([first.shape, target]) };
      else if (typeof n === 'number') result = { elemType: first.elemType, shape: Array.from({ length: Math.max(n, first.shape.length) }, () => fresh()) };
    }
    if (result) infos.set(out, result);
  }
  return infos;
}

function sumDims(dims: Dim[], fresh: () => string): Dim {
  return dims.every((d) => typeof d === 'number') ? (dims as number[]).reduce((a, b) => a + b, 0) : fresh();
}

/** value_info entries for the graph's intermediate tensors (not its inputs, outputs or initializers). */
export function valueInfoOf(graph: onnx.IGraphProto): onnx.IValueInfoProto[] {
  const infos = inferShapes(graph);
  const skip = new Set([...(graph.input ?? []), ...(graph.output ?? [])].map((v) => v.name ?? ''));
  for (const init of graph.initializer ?? []) skip.add(init.name ?? '');
  const entries: onnx.IValueInfoProto[] = [];
  for (const node of graph.node ?? []) {
    for (const name of node.output ?? []) {
      const info = infos.get(name);
      if (!name || skip.has(name) || !info) continue;
      entries.push({
        name,
        type: { tensorType: { elemType: info.elemType, shape: { dim: info.shape.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) } } },
      });
    }
  }
  return entries;
}
