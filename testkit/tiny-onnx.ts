/**
 * Writes tiny float32 BERT-shaped ONNX models for tests: embeddings of (input id mod 97) plus token type, then
 * either the raw states as `last_hidden_state` (bi-encoder) or a masked mean and a linear layer as `logits`
 * (cross-encoder). Float maths with a mask makes padding exact, which the int8 test model cannot show.
 * Hand-written protobuf, so tests need neither Python nor an ONNX package.
 */

const HIDDEN = 8;
const VOCAB_MOD = 97;

class ProtoWriter {
  private readonly parts: Buffer[] = [];

  private static varint(value: number | bigint): Buffer {
    let n = BigInt(value);
    const bytes: number[] = [];
    do {
      let byte = Number(n & 0x7fn);
      n >>= 7n;
      if (n > 0n) byte |= 0x80;
      bytes.push(byte);
    } while (n > 0n);
    return Buffer.from(bytes);
  }

  int(field: number, value: number | bigint): this {
    this.parts.push(ProtoWriter.varint(field << 3), ProtoWriter.varint(value));
    return this;
  }

  bytes(field: number, value: Buffer | string | ProtoWriter): this {
    const payload = value instanceof ProtoWriter ? value.toBuffer() : Buffer.isBuffer(value) ? value : Buffer.from(value, 'utf8');
    this.parts.push(ProtoWriter.varint((field << 3) | 2), ProtoWriter.varint(payload.length), payload);
    return this;
  }

  toBuffer(): Buffer {
    return Buffer.concat(this.parts);
  }
}

const FLOAT = 1;
const INT64 = 7;

function tensor(name: string, dataType: number, dims: number[], raw: Buffer): ProtoWriter {
  const proto = new ProtoWriter();
  for (const dim of dims) proto.int(1, dim);
  return proto.int(2, dataType).bytes(8, name).bytes(9, raw);
}

function floats(values: number[]): Buffer {
  return Buffer.from(new Float32Array(values).buffer);
}

function int64s(values: number[]): Buffer {
  return Buffer.from(BigInt64Array.from(values.map(BigInt)).buffer);
}

function valueInfo(name: string, elemType: number, dims: Array<string | number>): ProtoWriter {
  const shape = new ProtoWriter();
  for (const dim of dims) shape.bytes(1, typeof dim === 'number' ? new ProtoWriter().int(1, dim) : new ProtoWriter().bytes(2, dim));
  const tensorType = new ProtoWriter().int(1, elemType).bytes(2, shape);
  return new ProtoWriter().bytes(1, name).bytes(2, new ProtoWriter().bytes(1, tensorType));
}

function node(opType: string, inputs: string[], outputs: string[], attributes: ProtoWriter[] = []): ProtoWriter {
  const proto = new ProtoWriter();
  for (const input of inputs) proto.bytes(1, input);
  for (const output of outputs) proto.bytes(2, output);
  proto.bytes(3, `${opType}_${outputs[0] ?? ''}`).bytes(4, opType);
  for (const attribute of attributes) proto.bytes(5, attribute);
  return proto;
}

function intAttribute(name: string, value: number): ProtoWriter {
  return new ProtoWriter().bytes(1, name).int(3, value).int(20, 2);
}

/** Deterministic weights in [-1, 1]. */
function weights(count: number, seed: number): number[] {
  return Array.from({ length: count }, (_, i) => Math.sin(i * 12.9898 + seed * 78.233));
}

export function tinyBertOnnx(kind: 'cross-encoder' | 'bi-encoder'): Buffer {
  const nodes = [
    node('Mod', ['input_ids', 'vocab_mod'], ['ids_mod']),
    node('Gather', ['word_embeddings', 'ids_mod'], ['words']),
    node('Gather', ['type_embeddings', 'token_type_ids'], ['types']),
    node('Add', ['words', 'types'], ['hidden']),
  ];
  const initializers = [
    tensor('vocab_mod', INT64, [], int64s([VOCAB_MOD])),
    tensor('word_embeddings', FLOAT, [VOCAB_MOD, HIDDEN], floats(weights(VOCAB_MOD * HIDDEN, 1))),
    tensor('type_embeddings', FLOAT, [2, HIDDEN], floats(weights(2 * HIDDEN, 2))),
  ];
  const inputs = [
    valueInfo('input_ids', INT64, ['batch', 'seq']),
    valueInfo('attention_mask', INT64, ['batch', 'seq']),
    valueInfo('token_type_ids', INT64, ['batch', 'seq']),
  ];
  let output: ProtoWriter;
  if (kind === 'bi-encoder') {
    nodes.push(node('Identity', ['hidden'], ['last_hidden_state']));
    output = valueInfo('last_hidden_state', FLOAT, ['batch', 'seq', HIDDEN]);
  } else {
    nodes.push(
      node('Cast', ['attention_mask'], ['mask_float'], [intAttribute('to', FLOAT)]),
      node('Unsqueeze', ['mask_float', 'axis_2'], ['mask_3d']),
      node('Mul', ['hidden', 'mask_3d'], ['masked']),
      node('ReduceSum', ['masked', 'axis_1'], ['summed'], [intAttribute('keepdims', 0)]),
      node('ReduceSum', ['mask_3d', 'axis_1'], ['counted'], [intAttribute('keepdims', 0)]),
      node('Div', ['summed', 'counted'], ['mean']),
      node('MatMul', ['mean', 'classifier'], ['logits']),
    );
    initializers.push(
      tensor('axis_1', INT64, [1], int64s([1])),
      tensor('axis_2', INT64, [1], int64s([2])),
      tensor('classifier', FLOAT, [HIDDEN, 1], floats(weights(HIDDEN, 3).map((w) => w * 3))),
    );
    output = valueInfo('logits', FLOAT, ['batch', 1]);
  }
  const graph = new ProtoWriter();
  for (const n of nodes) graph.bytes(1, n);
  graph.bytes(2, `tiny-${kind}`);
  for (const init of initializers) graph.bytes(5, init);
  for (const input of inputs) graph.bytes(11, input);
  graph.bytes(12, output);
  return new ProtoWriter()
    .int(1, 8)
    .bytes(2, 'notary-tests')
    .bytes(7, graph)
    .bytes(8, new ProtoWriter().bytes(1, '').int(2, 13))
    .toBuffer();
}
