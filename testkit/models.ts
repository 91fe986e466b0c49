import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sharedDir } from './components.js';
import { tinyBertOnnx } from './tiny-onnx.js';

export { sharedDir };
export const crossEncoderDir = path.join(sharedDir, 'models', 'ms-marco-MiniLM-L-6-v2');
export const biEncoderDir = path.join(sharedDir, 'models', 'all-MiniLM-L6-v2');

export interface ReferenceCase {
  query: string;
  passage: string;
  input_ids: number[];
  token_type_ids: number[];
  logit: number;
}

export interface ReferenceLogits {
  model: string;
  max_length: number;
  tolerance: number;
  cases: ReferenceCase[];
}

/**
 * A folder holding a tiny float BERT-shaped ONNX model (reranker/tiny-onnx.ts) with the shared tokenizer: a real
 * model for wiring tests, with no semantic meaning.
 */
export function tinyModelDir(kind: 'cross-encoder' | 'bi-encoder', parent: string = tmpdir()): string {
  const dir = mkdtempSync(path.join(parent, `notary-tiny-${kind}-`));
  copyFileSync(path.join(crossEncoderDir, 'tokenizer.json'), path.join(dir, 'tokenizer.json'));
  const architectures = kind === 'cross-encoder' ? ['BertForSequenceClassification'] : ['BertModel'];
  writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ architectures, model_type: 'bert' }));
  writeFileSync(path.join(dir, 'model.onnx'), tinyBertOnnx(kind));
  return dir;
}
