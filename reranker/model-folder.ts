import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { NotaryError } from '../core/index.js';

/** What an ONNX model folder holds, read from its files: which .onnx file, its config.json, its kind, quantisation. */

export type OnnxModelKind = 'cross-encoder' | 'bi-encoder';

/** File names tried, in this order, when a model directory holds several .onnx files. */
export const PREFERRED_ONNX_FILES = ['model.onnx', 'model_quantized.onnx', 'model_int8.onnx'] as const;

export const EMBEDDING_OUTPUTS = ['sentence_embedding', 'last_hidden_state', 'token_embeddings'] as const;

function listOnnx(dir: string): string[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith('.onnx'))
    .sort();
}

/**
 * The .onnx file of a model directory: `onnxFile` when given (relative to the directory), otherwise the first of
 * PREFERRED_ONNX_FILES in `onnx/` then the directory itself, otherwise the only *.onnx file there.
 */
export function findOnnxFile(dir: string, onnxFile?: string): string {
  if (onnxFile) {
    const file = path.resolve(dir, onnxFile);
    if (!existsSync(file)) throw new NotaryError('model_unavailable', `model file ${file} does not exist`);
    return file;
  }
  const folders = [path.join(dir, 'onnx'), dir];
  for (const folder of folders) {
    for (const name of PREFERRED_ONNX_FILES) {
      const file = path.join(folder, name);
      if (existsSync(file)) return file;
    }
  }
  for (const folder of folders) {
    const found = listOnnx(folder);
    if (found.length === 1 && found[0] !== undefined) return path.join(folder, found[0]);
    if (found.length > 1) {
      throw new NotaryError(
        'model_unavailable',
        `${folder} holds several .onnx files (${found.join(', ')}); name one (e.g. ${PREFERRED_ONNX_FILES[0]})`,
      );
    }
  }
  throw new NotaryError('model_unavailable', `no .onnx file in ${dir} or ${path.join(dir, 'onnx')}`);
}

/** Parsed config.json of a model directory; a missing or unreadable file is a model_unavailable error. */
export function readModelConfig(dir: string): Record<string, unknown> {
  const file = path.join(dir, 'config.json');
  if (!existsSync(file)) throw new NotaryError('model_unavailable', `model directory ${dir} has no config.json`);
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not a JSON object');
    return parsed as Record<string, unknown>;
  } catch (err) {
    throw new NotaryError('model_unavailable', `cannot read ${file}: ${(err as Error).message}`);
  }
}

/**
 * Cross-encoder or bi-encoder, from the model's own config.json (`architectures`) and, when known, the output
 * names of its ONNX session. The two must agree when both say something.
 */
export function detectModelKind(modelConfig: Record<string, unknown>, outputNames: readonly string[] = []): OnnxModelKind {
  const architectures = Array.isArray(modelConfig['architectures']) ? modelConfig['architectures'].map(String) : [];
  let fromConfig: OnnxModelKind | undefined;
  if (architectures.some((name) => name.endsWith('ForSequenceClassification'))) fromConfig = 'cross-encoder';
  else if (architectures.some((name) => name.endsWith('Model'))) fromConfig = 'bi-encoder';
  let fromOutputs: OnnxModelKind | undefined;
  if (outputNames.includes('logits')) fromOutputs = 'cross-encoder';
  else if (EMBEDDING_OUTPUTS.some((name) => outputNames.includes(name))) fromOutputs = 'bi-encoder';
  if (fromConfig && fromOutputs && fromConfig !== fromOutputs) {
    throw new NotaryError(
      'model_unavailable',
      `config.json says ${fromConfig} (architectures ${architectures.join(', ')}) but the ONNX outputs (${outputNames.join(', ')}) say ${fromOutputs}`,
    );
  }
  const kind = fromConfig ?? fromOutputs;
  if (!kind) {
    throw new NotaryError(
      'model_unavailable',
      `cannot tell whether the model is a cross-encoder or a bi-encoder (architectures: ${architectures.join(', ') || 'none'}; outputs: ${outputNames.join(', ') || 'unknown'})`,
    );
  }
  return kind;
}

/**
 * Whether the ONNX file holds dynamic-quantisation operators (their op_type names are plain strings in the
 * protobuf, so a byte search finds them without an ONNX parser).
 */
export function isDynamicallyQuantized(onnxPath: string): boolean {
  const bytes = readFileSync(onnxPath);
  return bytes.includes('DynamicQuantizeLinear') || bytes.includes('DynamicQuantizeMatMul');
}
