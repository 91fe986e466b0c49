import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** /work/shared (or NOTARY_SHARED_DIR): shared test material that is referred to, never copied. */
export const sharedDir = process.env['NOTARY_SHARED_DIR'] ?? path.resolve(repoRoot, '../shared');
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
